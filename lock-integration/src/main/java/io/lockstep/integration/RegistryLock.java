package io.lockstep.integration;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import io.lockstep.internal.engine.ThreadOwnedLock;
import org.jspecify.annotations.Nullable;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.util.Assert;

/**
 * One key's lock of a {@link LockstepLockRegistry}: a {@link ThreadOwnedLock} that also
 * takes a fixed lease per acquisition ({@code ttl}), and remembers it for
 * {@code renewLock(key)}.
 */
final class RegistryLock implements DistributedLock {

	private final ThreadOwnedLock lock;

	/** The fixed lease of the current hold, or {@code null}; the holder's only. */
	private @Nullable Duration ttl;

	RegistryLock(ThreadOwnedLock lock) {
		this.lock = lock;
	}

	ThreadOwnedLock owned() {
		return this.lock;
	}

	@Nullable Duration ttl() {
		return this.lock.isHeldByCurrentThread() ? this.ttl : null;
	}

	@Override
	public void lock() {
		boolean first = !this.lock.isHeldByCurrentThread();
		this.lock.lock();
		if (first) {
			this.ttl = null;
		}
	}

	/** Locks with a fixed lease of {@code ttl} (a re-entry keeps the lease it holds). */
	@Override
	public void lock(Duration ttl) {
		Assert.notNull(ttl, "'ttl' must not be null");
		boolean first = !this.lock.isHeldByCurrentThread();
		this.lock.lock(ttl);
		if (first) {
			this.ttl = ttl;
		}
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		boolean first = !this.lock.isHeldByCurrentThread();
		this.lock.lockInterruptibly();
		if (first) {
			this.ttl = null;
		}
	}

	@Override
	public boolean tryLock() {
		boolean first = !this.lock.isHeldByCurrentThread();
		boolean locked = this.lock.tryLock();
		if (locked && first) {
			this.ttl = null;
		}
		return locked;
	}

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLockFor(Duration.ofNanos(unit.toNanos(time)), null);
	}

	/**
	 * Waits up to {@code waitTime}; a first acquisition takes a fixed lease of
	 * {@code ttl}.
	 */
	@Override
	public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
		Assert.notNull(waitTime, "'waitTime' must not be null");
		Assert.notNull(ttl, "'ttl' must not be null");
		return tryLockFor(waitTime, ttl);
	}

	private boolean tryLockFor(Duration waitTime, @Nullable Duration ttl) throws InterruptedException {
		boolean first = !this.lock.isHeldByCurrentThread();
		boolean locked = this.lock.tryLock(waitTime, ttl);
		if (locked && first) {
			this.ttl = ttl;
		}
		return locked;
	}

	@Override
	public void unlock() {
		this.lock.unlock();
	}

	/** Not supported: a distributed lock has no condition queue. */
	@Override
	public Condition newCondition() {
		return this.lock.newCondition();
	}

	@Override
	public String toString() {
		return this.lock.toString();
	}

}
