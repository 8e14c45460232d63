package io.lockstep.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
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

	/** The holding thread; the other fields are read and written by it only. */
	private volatile @Nullable Thread owner;

	private int holds;

	private @Nullable LockHandle handle;

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
		if (this.owner != Thread.currentThread()) {
			throw new IllegalMonitorStateException(
					"Lock '" + this.key + "' is not held by thread '" + Thread.currentThread().getName() + "'");
		}
		if (--this.holds > 0) {
			return;
		}
		LockHandle released = this.handle;
		this.handle = null;
		this.owner = null;
		if (released != null) {
			released.close();
		}
	}

	/** Whether the current thread holds the lock (by this client's view of its lease). */
	public boolean isHeldByCurrentThread() {
		return this.owner == Thread.currentThread();
	}

	/** The handle of the current thread's hold, or {@code null} when it holds none. */
	public @Nullable LockHandle handle() {
		return isHeldByCurrentThread() ? this.handle : null;
	}

	/** Not supported: a distributed lock has no condition queue. */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException(
				"Conditions are not supported by the distributed lock '" + this.key + "'");
	}

	private boolean reenter() {
		if (this.owner == Thread.currentThread()) {
			this.holds++;
			return true;
		}
		return false;
	}

	private boolean held(LockHandle acquired) {
		this.handle = acquired;
		this.holds = 1;
		this.owner = Thread.currentThread();
		return true;
	}

	private LockTemplate templateFor(@Nullable Duration lease) {
		return (lease != null) ? this.template.withLeaseTime(lease) : this.template;
	}

	@Override
	public String toString() {
		Thread holder = this.owner;
		return "ThreadOwnedLock[" + this.key + ", " + ((holder != null) ? "held by " + holder.getName() : "free") + "]";
	}

}
