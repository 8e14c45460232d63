package io.lockstep.benchmarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson with its defaults. Locks: {@code RLock} and the two locks of
 * {@code RReadWriteLock}, each with {@code lock()} without a lease time, so the watchdog
 * (30 s, renewed every 10 s) keeps them; waiters are woken through its pub/sub channel
 * per lock. Semaphores: {@link RPermitExpirableSemaphore}, each permit with an id and a
 * lease of its own ({@value #PERMIT_LEASE_SECONDS} s, like the watchdog's; Redisson
 * renews no permit), so a crashed holder's permit comes back when its lease ends, as a
 * Lockstep holder's share does. {@code RSemaphore} is not used: it has no lease, and a
 * crashed holder's permit is lost for good.
 */
final class RedissonContender implements Contender {

	static final long PERMIT_LEASE_SECONDS = 30;

	private final RedissonClient redisson;

	private final Map<String, RPermitExpirableSemaphore> semaphores = new ConcurrentHashMap<>();

	RedissonContender(RedisTarget redis) {
		Config config = new Config();
		config.useSingleServer().setAddress(redis.uri());
		this.redisson = Redisson.create(config);
	}

	@Override
	public Held acquire(String key) {
		return hold(this.redisson.getLock(key));
	}

	@Override
	public Held acquireRead(String key) {
		return hold(this.redisson.getReadWriteLock(key).readLock());
	}

	@Override
	public Held acquireWrite(String key) {
		return hold(this.redisson.getReadWriteLock(key).writeLock());
	}

	private static Held hold(RLock lock) {
		lock.lock();
		return lock::unlock;
	}

	/**
	 * Sets the semaphore's permits in Redis the first time this client uses the key
	 * ({@code trySetPermits}: only if nobody set them yet), then acquires one with its
	 * lease.
	 */
	@Override
	public Held acquirePermit(String key, int permits) {
		RPermitExpirableSemaphore semaphore = this.semaphores.computeIfAbsent(key, (name) -> {
			RPermitExpirableSemaphore created = this.redisson.getPermitExpirableSemaphore(name);
			created.trySetPermits(permits);
			return created;
		});
		String permit;
		try {
			permit = semaphore.acquire(PERMIT_LEASE_SECONDS, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while acquiring a permit of " + key, ex);
		}
		return () -> semaphore.release(permit);
	}

	@Override
	public void close() {
		this.redisson.shutdown(0, 2, TimeUnit.SECONDS);
	}

}
