package io.lockstep.internal.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.lockstep.LockException;
import io.lockstep.LockLostException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an engine's handles end their leases: leaving them, releasing (or keeping until the
 * minimum hold passes) those left by their last handle, confirming them before a commit,
 * and giving up those of a leaked handle. Also the identity of the engine for its handles
 * ({@link io.lockstep.LockHandle#owner()}): reentrancy is per engine.
 */
final class Releaser {

	private static final Logger logger = LoggerFactory.getLogger(Releaser.class);

	/** The first pause before a failed release is tried again. */
	private static final long RETRY_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private static final long RETRY_MAX_MILLIS = 1000;

	private static final long RETRY_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(RETRY_MAX_MILLIS);

	private final LockStore store;

	private final LocalQueues waiters;

	private final LeaseEvents events;

	private final LockObservations observations;

	private final String keyPrefix;

	private final Supplier<AsyncThreads> threads;

	private final Extensions extensions;

	/**
	 * @param options the engine's options (its key prefix and observations)
	 */
	Releaser(LockStore store, LocalQueues waiters, LeaseEvents events, EngineOptions options,
			Supplier<AsyncThreads> threads, Watchdog watchdog) {
		this.store = store;
		this.extensions = new Extensions(store, watchdog);
		this.waiters = waiters;
		this.events = events;
		this.observations = options.observations();
		this.keyPrefix = options.keyPrefix();
		this.threads = threads;
	}

	String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * The threads that close handles asynchronously.
	 * @throws io.lockstep.LockException once the engine is closed
	 */
	AsyncThreads threads() {
		return this.threads.get();
	}

	/**
	 * A handle leaves its leases; each lease left by its last handle is released.
	 * @throws LockLostException if a lease released here was lost while held
	 */
	void exit(List<Lease> parts, CallFrame call) {
		LockLostException lost = null;
		for (Lease lease : parts) {
			if (lease.exit(call)) {
				LockLostException failure = release(lease);
				lost = (lost != null) ? lost : failure;
			}
		}
		if (lost != null) {
			throw lost;
		}
	}

	/**
	 * Releases a lease: the storage's compare-and-delete decides, or, before the lease's
	 * minimum hold has passed, the storage's compare-and-expire, which leaves the keys to
	 * expire when it passes (waiters are not told: the keys are still taken). Every key
	 * deleted or kept proves the lease was held until now (never a loss, whatever the
	 * local clock says); a key gone or owned by another owner is a loss. When the storage
	 * does not answer, a lease still valid by the local clock is left to expire (logged
	 * and counted, not the caller's failure); one that had run out is a loss.
	 * @return the loss to report, or {@code null}
	 */
	private LockLostException release(Lease lease) {
		long started = System.nanoTime();
		Lease.State prior = lease.beginRelease();
		if (prior == Lease.State.LOST) {
			// the key may still hold our token (lost by the local clock): free it for
			// others
			try {
				this.store.release(LockStore.Release.of(lease.id(), lease.owner()));
			}
			catch (LockException ex) {
				logger.debug("Releasing the lost lock '{}' failed; it expires on its own", lease.id().display(), ex);
			}
			lease.id().keys().forEach(this.waiters::holderLeft);
			return new LockLostException(lease.id().display(), lease.reason());
		}
		if (prior != Lease.State.HELD) {
			lease.id().keys().forEach(this.waiters::holderLeft);
			return null;
		}
		boolean ranOut = started - lease.deadlineNanos() >= 0;
		long keepMillis = lease.minHoldLeftMillis(started);
		int done;
		try {
			done = (keepMillis > 0) ? keep(lease, keepMillis) : releaseNamingSuccessor(lease, started);
		}
		catch (LockException ex) {
			if (ranOut) {
				String reason = "the lease ran out by the local clock before release, and the release failed: "
						+ ex.getMessage();
				lease.endRelease(Lease.State.LOST, reason);
				return new LockLostException(lease.id().display(), reason);
			}
			this.events.releaseFailed(lease, ex);
			lease.endRelease(Lease.State.EXPIRING, "release failed: " + ex.getMessage());
			if (keepMillis <= 0) {
				later(LockStore.Release.of(lease.id(), lease.owner()), lease.deadlineNanos(), RETRY_FIRST_NANOS);
			}
			return null;
		}
		if (keepMillis <= 0 && done > 0) {
			lease.id().keys().forEach(this.waiters::released);
		}
		if (done == lease.id().size()) {
			if (keepMillis > 0) {
				lease.endRelease(Lease.State.EXPIRING, "kept until its minimum hold passes, in " + keepMillis + " ms");
			}
			else {
				lease.endRelease(Lease.State.RELEASED, null);
			}
			return null;
		}
		String reason = ranOut ? "the lease ran out by the local clock before release (at release a key was gone)"
				: "at release a key of the lock was gone or held by another owner";
		lease.endRelease(Lease.State.LOST, reason);
		return new LockLostException(lease.id().display(), reason);
	}

	/**
	 * Leaves the lease's keys to expire when its minimum hold passes; a local head
	 * promoted behind it asks now (it learns when).
	 */
	private int keep(Lease lease, long keepMillis) {
		try {
			return this.store.release(LockStore.Release.keep(lease.id(), lease.owner(), keepMillis));
		}
		finally {
			lease.id().keys().forEach(this.waiters::holderLeft);
		}
	}

	/**
	 * Releases the lease, naming the successor of a one-key exclusive lock that the store
	 * may hand it to: the first of its local hand-off waiters, promoted behind this
	 * holder. The naming is resolved either way: a successor not handed the lock asks. A
	 * lock handed to a successor that left meanwhile is given back, until its hand-off
	 * lease has passed.
	 */
	private int releaseNamingSuccessor(Lease lease, long started) {
		LockId id = lease.id();
		LocalQueues.Naming successor = (id.size() == 1 && id.sharing().exclusive()
				&& this.store.handsToSuccessors())
						? this.waiters
							.successor(id.first(), started,
									(named) -> land(LockStore.Release.leave(id, named.owner()),
											System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(named.leaseMillis())))
						: null;
		if (successor == null) {
			return this.store.release(LockStore.Release.of(id, lease.owner()));
		}
		int released;
		try {
			released = this.store.release(LockStore.Release.of(id, lease.owner()), successor.successor());
		}
		catch (RuntimeException | Error ex) {
			successor.failed();
			throw ex;
		}
		successor.notHanded();
		return released;
	}

	/**
	 * Sends a release the caller does not wait for — an undo, a leave, or a release that
	 * failed after its work — until it lands: at once (in order after what the caller
	 * sent before it), then again in the background with a growing pause (up to
	 * {@value #RETRY_MAX_MILLIS} ms) each time the storage did not answer (unreachable, a
	 * connection that dropped what it had not written, a Cluster shard failing over),
	 * until it answers or {@code untilNanos} passes: the end of the lease what it gives
	 * back could have (then the keys expire on their own). Every mode is token-checked,
	 * so a repeat is harmless; a key left taken would hold its waiters up for the rest of
	 * its lease.
	 * @param untilNanos by when whatever it gives back has expired anyway
	 */
	void land(LockStore.Release request, long untilNanos) {
		send(request, untilNanos, RETRY_FIRST_NANOS, false);
	}

	private void send(LockStore.Release request, long untilNanos, long delayNanos, boolean again) {
		CompletableFuture<Integer> reply;
		try {
			reply = this.store.send(request);
		}
		catch (RuntimeException | Error ex) {
			// sent again later like any failure; an Error of the storage client must not
			// end what sent it (an acquisition's ending, a worker)
			reply = CompletableFuture.failedFuture(ex);
		}
		reply.whenComplete((freed, failure) -> {
			try {
				if (failure == null) {
					landed(request, freed, again);
				}
				else if (System.nanoTime() - untilNanos >= 0) {
					logger.debug("Gave up sending {} of '{}' again: what it gives back has expired", request.mode(),
							request.id().display());
				}
				else {
					later(request, untilNanos, delayNanos);
				}
			}
			catch (Throwable ex) {
				logger.error("Handling the reply to {} of '{}' failed", request.mode(), request.id().display(), ex);
			}
		});
	}

	private void landed(LockStore.Release request, int freed, boolean again) {
		if (freed > 0 && request.mode() != LockStore.Release.Mode.KEEP) {
			request.id().keys().forEach(this.waiters::released);
		}
		if (again) {
			logger.info("{} of lock '{}' landed on a later try, after the first failed", request.mode(),
					request.id().display());
		}
	}

	private void later(LockStore.Release request, long untilNanos, long delayNanos) {
		AsyncThreads threads;
		try {
			threads = this.threads.get();
		}
		catch (LockException ex) {
			// the engine is closed: what it gives back expires on its own
			return;
		}
		try {
			threads.schedule(
					() -> threads.workers()
						.execute(() -> send(request, untilNanos, Math.min(delayNanos * 2, RETRY_MAX_NANOS), true)),
					delayNanos);
		}
		catch (RuntimeException ex) {
			// closed meanwhile: what it gives back expires on its own
			logger.debug("Not sending {} of '{}' again: the lock client is closed", request.mode(),
					request.id().display());
		}
	}

	/**
	 * Sets every lease to end {@code leaseNanos} from now (never past its max-hold cap);
	 * see {@link Extensions#extend}.
	 * @return whether every lease is still held
	 */
	boolean extend(List<Lease> parts, long leaseNanos) {
		return this.extensions.extend(parts, leaseNanos);
	}

	/**
	 * Confirms in storage that every lease is still held; marks a lease lost and throws
	 * if not. Leases released normally pass.
	 */
	void verify(List<Lease> parts) {
		for (Lease lease : parts) {
			if (lease.state() == Lease.State.HELD) {
				int held = this.store.check(lease.id(), lease.owner());
				if (held < lease.id().size()) {
					lease.lose("a key of the lock was gone or held by another owner when checked");
				}
				else if (System.nanoTime() - lease.deadlineNanos() >= 0) {
					lease.lose("the lease ran out by the local clock");
				}
			}
			Lease.State state = lease.state();
			if (state != Lease.State.HELD && state != Lease.State.RELEASED && state != Lease.State.EXPIRING) {
				throw new LockLostException(lease.id().display(),
						(lease.reason() != null) ? lease.reason() : "it is no longer held (" + state + ")");
			}
		}
	}

	/**
	 * Confirms every lease before the transaction the call runs in commits, like
	 * {@link #verify}; a check the storage did not answer (unreachable, failing) is
	 * counted ({@code precommit.failed}, on the held lock's observation) and named, and
	 * the transaction rolls back as for a lost lease.
	 * @throws LockLostException when a lease was lost
	 * @throws LockException when a lease could not be confirmed
	 */
	void verifyBeforeCommit(LockId id, List<Lease> parts) {
		for (Lease lease : parts) {
			try {
				verify(List.of(lease));
			}
			catch (LockLostException ex) {
				throw ex;
			}
			catch (LockException ex) {
				this.observations.precommitFailed(lease.observation());
				throw new LockException("Could not confirm the lock before commit ('" + id.display()
						+ "'), so the transaction rolls back: " + ex.getMessage(), ex);
			}
		}
	}

	/** A handle became unreachable without {@code close()}. */
	void leaked(LockId id, List<Lease> parts, CallFrame call) {
		logger.warn("A LockHandle of '{}' became unreachable without close(); its lease is no longer renewed and "
				+ "expires on its own. Close every handle (try-with-resources).", id.display());
		for (Lease lease : parts) {
			if (lease.exit(call)) {
				lease.leak("its handle was dropped without close()");
				lease.id().keys().forEach(this.waiters::holderLeft);
			}
		}
	}

}
