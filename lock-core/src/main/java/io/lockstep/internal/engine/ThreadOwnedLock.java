package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Lock} on one key of a {@link LockTemplate}, owned by the thread that locked it
 * and reentrant for that thread, as {@code java.util.concurrent.locks.Lock} users expect:
 * {@link #lock()} waits until it gets the lock (the template's wait time does not apply),
 * {@link #lockInterruptibly()} ends on interrupt with nothing held, and {@link #unlock()}
 * by a thread that does not hold it throws {@link IllegalMonitorStateException}. Redis
 * trouble fails every method fast with a {@link LockException}, as the template does. The
 * lease is the template's (a watchdog lease unless it has a fixed one), or a fixed lease
 * per acquisition.
 */
public final class ThreadOwnedLock implements Lock {

	/** The longest wait of one acquisition; {@link #lock()} asks again after it. */
	private static final Duration MAX_WAIT = Duration.ofHours(1);

	private final LockTemplate template;

	private final String key;

	/**
	 * The holds by thread: one at a time while leases hold, but a thread whose lease was
	 * lost keeps its hold until it unlocks, while another may have taken the lock.
	 */
	private final Map<Thread, Hold> holds = new ConcurrentHashMap<>();

	public ThreadOwnedLock(LockTemplate template, String key) {
		this.template = template;
		this.key = key;
	}

	public String key() {
		return this.key;
	}

	@Override
	public void lock() {
		lock(null);
	}

	/**
	 * Like {@link #lock()}; a first acquisition takes a fixed lease of {@code lease} when
	 * it is not {@code null} (a re-entry keeps the lease it holds).
	 */
	public void lock(@Nullable Duration lease) {
		if (reenter()) {
			return;
		}
		boolean interrupted = false;
		try {
			while (true) {
				try {
					LockHandle acquired = templateFor(lease).withWaitTime(MAX_WAIT).acquire(this.key);
					held(acquired);
					return;
				}
				catch (LockAcquisitionException ex) {
					// waited an hour: ask again
				}
				catch (LockException ex) {
					// an interrupt ends the wait: lock() is not interruptible
					if (!Thread.interrupted()) {
						throw ex;
					}
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before locking '" + this.key + "'");
		}
		if (reenter()) {
			return;
		}
		while (!tryLock(MAX_WAIT, null)) {
			// waited an hour: ask again
		}
	}

	@Override
	public boolean tryLock() {
		if (reenter()) {
			return true;
		}
		return this.template.tryAcquire(this.key).map(this::held).orElse(false);
	}

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLock(Duration.ofNanos(unit.toNanos(time)), null);
	}

	/**
	 * Like {@link #tryLock(long, TimeUnit)}; a first acquisition takes a fixed lease of
	 * {@code lease} when it is not {@code null}.
	 */
	public boolean tryLock(Duration wait, @Nullable Duration lease) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before locking '" + this.key + "'");
		}
		if (reenter()) {
			return true;
		}
		LockTemplate locks = templateFor(lease);
		long deadline = System.nanoTime() + Math.max(0, wait.toNanos());
		while (true) {
			long left = deadline - System.nanoTime();
			try {
				if (left <= 0) {
					return locks.tryAcquire(this.key).map(this::held).orElse(false);
				}
				Duration next = Duration.ofNanos(Math.min(left, MAX_WAIT.toNanos()));
				return held(locks.withWaitTime(next).acquire(this.key));
			}
			catch (LockAcquisitionException ex) {
				// the wait ran out, or an hour of a longer one passed
			}
			catch (LockException ex) {
				if (Thread.interrupted()) {
					InterruptedException interrupted = new InterruptedException(
							"Interrupted while waiting for lock '" + this.key + "'");
					interrupted.initCause(ex);
					throw interrupted;
				}
				throw ex;
			}
		}
	}

	/**
	 * Leaves one level of the current thread's hold; the last one releases the lock.
	 * @throws IllegalMonitorStateException if the current thread does not hold it
	 * @throws io.lockstep.LockLostException if the lease was lost while held (the lock is
	 * no longer this thread's either way)
	 */
	@Override
	public void unlock() {
		Hold hold = this.holds.get(Thread.currentThread());
		if (hold == null) {
			throw new IllegalMonitorStateException(
					"Lock '" + this.key + "' is not held by thread '" + Thread.currentThread().getName() + "'");
		}
		if (--hold.count > 0) {
			return;
		}
		this.holds.remove(Thread.currentThread());
		hold.handle.close();
	}

	/** Whether the current thread holds the lock (its lease may have been lost since). */
	public boolean isHeldByCurrentThread() {
		return this.holds.containsKey(Thread.currentThread());
	}

	/** The handle of the current thread's hold, or {@code null} when it holds none. */
	public @Nullable LockHandle handle() {
		Hold hold = this.holds.get(Thread.currentThread());
		return (hold != null) ? hold.handle : null;
	}

	/** Not supported: a distributed lock has no condition queue. */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException(
				"Conditions are not supported by the distributed lock '" + this.key + "'");
	}

	/**
	 * Enters the current thread's hold once more, if it has one.
	 * @throws LockLostException if its lease was lost while held: the hold stays until
	 * {@link #unlock()} (which reports the loss), so that no call takes a lost lock for a
	 * held one
	 */
	private boolean reenter() {
		Hold hold = this.holds.get(Thread.currentThread());
		if (hold == null) {
			return false;
		}
		if (!hold.handle.isHeld()) {
			throw new LockLostException(this.key,
					"the lease was lost while this thread held the lock; unlock() ends the hold");
		}
		hold.count++;
		return true;
	}

	private boolean held(LockHandle acquired) {
		this.holds.put(Thread.currentThread(), new Hold(acquired));
		return true;
	}

	private LockTemplate templateFor(@Nullable Duration lease) {
		return (lease != null) ? this.template.withLeaseTime(lease) : this.template;
	}

	@Override
	public String toString() {
		List<String> holders = this.holds.keySet().stream().map(Thread::getName).toList();
		return "ThreadOwnedLock[" + this.key + ", " + (holders.isEmpty() ? "free" : "held by " + holders) + "]";
	}

	/** One thread's hold: its handle and re-entries; read and written by that thread. */
	private static final class Hold {

		private final LockHandle handle;

		private int count = 1;

		Hold(LockHandle handle) {
			this.handle = handle;
		}

	}

}
