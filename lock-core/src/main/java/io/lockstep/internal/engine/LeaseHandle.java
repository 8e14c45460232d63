package io.lockstep.internal.engine;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.lockstep.LockHandle;
import io.lockstep.internal.CallContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handle of one acquisition: the leases it holds (its own, and those of the call's
 * outer acquisitions that already held some of its keys) and the call that guards work
 * with it. Closing leaves each lease once; a lease left by its last handle is released. A
 * handle that becomes unreachable without {@code close()} is detected as leaked: its
 * leases stop being renewed and expire on their own.
 */
final class LeaseHandle implements LockHandle, CallContext.Entry {

	private static final Logger logger = LoggerFactory.getLogger(LeaseHandle.class);

	private static final Cleaner cleaner = Cleaner.create((task) -> {
		Thread thread = new Thread(task, "lockstep-leak-detector");
		thread.setDaemon(true);
		return thread;
	});

	private final Releaser releases;

	private final LockId id;

	private final List<Lease> parts;

	private final CallFrame call;

	private final AtomicBoolean closed;

	private final Cleaner.Cleanable cleanable;

	/** Enters every part; call on the acquiring thread. */
	LeaseHandle(Releaser releases, LockId id, List<Lease> parts) {
		this(releases, id, parts, true);
	}

	/**
	 * Enters every part.
	 * @param onThisThread whether the guarded call runs on the current thread (it joins
	 * the thread's call context and may be interrupted on loss); {@code false} for a
	 * handle bound to no thread ({@link LockEngine#acquireAsync})
	 */
	LeaseHandle(Releaser releases, LockId id, List<Lease> parts, boolean onThisThread) {
		this.releases = releases;
		this.id = id;
		this.parts = List.copyOf(parts);
		this.call = new CallFrame(onThisThread ? Thread.currentThread() : null);
		this.closed = new AtomicBoolean();
		this.parts.forEach((lease) -> lease.enter(this.call));
		this.cleanable = cleaner.register(this, new Leak(releases, id, this.parts, this.call, this.closed));
		if (onThisThread) {
			CallContext.push(this);
		}
	}

	List<Lease> parts() {
		return this.parts;
	}

	/**
	 * Checks that a call holding this handle may enter the keys of {@code asked} it holds
	 * the way {@code asked} says (see {@link Sharing#checkReentry}).
	 * @throws io.lockstep.LockException at once, naming both ways, when it may not
	 */
	void checkReentry(LockId asked) {
		for (Lease lease : this.parts) {
			for (String key : lease.id().keys()) {
				if (asked.keys().contains(key)) {
					lease.id().sharing().checkReentry(asked.sharing(), key);
				}
			}
		}
	}

	@Override
	public String key() {
		return this.id.display();
	}

	@Override
	public List<String> keys() {
		return this.id.keys();
	}

	@Override
	public long fencingToken() {
		String first = this.id.first();
		for (Lease lease : this.parts) {
			if (lease.id().keys().contains(first)) {
				return lease.fencingToken(first);
			}
		}
		throw new IllegalStateException("No lease holds " + first);
	}

	@Override
	public boolean isHeld() {
		if (this.closed.get()) {
			return false;
		}
		for (Lease lease : this.parts) {
			if (!lease.isHeld()) {
				return false;
			}
		}
		return true;
	}

	@Override
	public boolean isActive() {
		if (this.closed.get() || this.call.isEnded()) {
			return false;
		}
		for (Lease lease : this.parts) {
			if (lease.state() != Lease.State.HELD) {
				return false;
			}
		}
		return true;
	}

	@Override
	public Object scope() {
		return this.releases;
	}

	@Override
	public String keyPrefix() {
		return this.releases.keyPrefix();
	}

	@Override
	public void verifyHeld() {
		this.releases.verify(this.parts);
	}

	@Override
	public boolean extend(Duration lease) {
		LockSettings.checkLease(lease, "lease");
		if (this.closed.get()) {
			return false;
		}
		return this.releases.extend(this.parts, lease.toNanos());
	}

	@Override
	public void verifyBeforeCommit() {
		this.releases.verifyBeforeCommit(this.id, this.parts);
	}

	@Override
	public boolean interruptedByLoss() {
		return this.call.interrupted();
	}

	@Override
	public void endCall() {
		endCallOnThisThread();
	}

	/**
	 * Leaves every lease once; the last handle of a lease releases it.
	 * @throws io.lockstep.LockLostException if a lease this close released was lost while
	 * held
	 */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.cleanable.clean();
			endCallOnThisThread();
			this.releases.exit(this.parts, this.call);
		}
	}

	/**
	 * Closes the handle on one of the engine's worker threads, never blocking the caller:
	 * the release is one round trip, bounded by the command timeout.
	 * @return completes when released; exceptionally with the
	 * {@link io.lockstep.LockLostException} that {@link #close()} would throw
	 */
	CompletableFuture<Void> closeAsync() {
		CompletableFuture<Void> released = new CompletableFuture<>();
		try {
			this.releases.threads().workers().execute(() -> {
				try {
					close();
					released.complete(null);
				}
				catch (Throwable ex) {
					released.completeExceptionally(ex);
				}
			});
		}
		catch (RuntimeException ex) {
			// the engine is closed: its leases expire on their own
			this.closed.set(true);
			released.completeExceptionally(ex);
		}
		return released;
	}

	/**
	 * Runs the action (once) when a lease of this handle is lost while the handle is
	 * open, or at once if one was lost already. Called on the thread that found the loss
	 * (the watchdog's): the action only hands over.
	 */
	void onLoss(Consumer<String> action) {
		this.call.onLoss(action);
		for (Lease lease : this.parts) {
			if (lease.state() == Lease.State.LOST) {
				this.call.lost(lease.reason());
			}
		}
	}

	private void endCallOnThisThread() {
		boolean interrupted = this.call.end();
		this.parts.forEach((lease) -> lease.calls().remove(this.call));
		if (this.call.thread() == Thread.currentThread()) {
			CallContext.remove(this);
			if (interrupted && !CallContext.anyInterruptedByLoss()) {
				// the library's own interrupt: cleared before the guarded call returns
				Thread.interrupted();
			}
		}
	}

	@Override
	public String toString() {
		return "LockHandle[" + key() + ", held=" + isHeld() + "]";
	}

	/** Runs when a handle became unreachable; must not refer to the handle. */
	private record Leak(Releaser releases, LockId id, List<Lease> parts, CallFrame call,
			AtomicBoolean closed) implements Runnable {

		@Override
		public void run() {
			if (!this.closed.compareAndSet(false, true)) {
				return;
			}
			try {
				this.call.end();
				this.releases.leaked(this.id, this.parts, this.call);
			}
			catch (Throwable ex) {
				logger.error("Handling the leaked lock handle of '{}' failed", this.id.display(), ex);
			}
		}

	}

}
