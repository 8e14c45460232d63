package io.lockstep.benchmarks;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;

/**
 * Lockstep as an application gets it: {@link RedisLockTemplate} on a Lettuce
 * {@link RedisClient}, watchdog lease (30 s, renewed while held), fencing tokens, release
 * notification. Read and write locks through its {@code read()} and {@code write()}
 * views, semaphores through {@code withPermits(n)}, each holder with a watchdog lease of
 * its own. Whatever the engine of this build does is what is measured.
 */
final class LockstepContender implements Contender {

	private final RedisClient client;

	private final RedisLockTemplate locks;

	private final LockTemplate readLocks;

	private final LockTemplate writeLocks;

	private final Map<Integer, LockTemplate> semaphores = new ConcurrentHashMap<>();

	/** Whether a lock is first tried without waiting ({@code lockstep-try-first}). */
	private final boolean tryFirst;

	LockstepContender(RedisTarget redis) {
		this(redis, false);
	}

	/**
	 * @param tryFirst whether {@link #acquire} first tries the lock without waiting, and
	 * waits for it only when it is taken
	 */
	LockstepContender(RedisTarget redis, boolean tryFirst) {
		this.tryFirst = tryFirst;
		this.client = RedisClient.create(redis.uri());
		this.locks = RedisLockTemplate.builder(this.client).waitTime(Duration.ofMinutes(1)).build();
		this.readLocks = this.locks.read();
		this.writeLocks = this.locks.write();
	}

	@Override
	public Held acquire(String key) {
		LockHandle handle = this.tryFirst ? this.locks.tryAcquire(key).orElseGet(() -> this.locks.acquire(key))
				: this.locks.acquire(key);
		return handle::close;
	}

	@Override
	public Held acquireRead(String key) {
		LockHandle handle = this.readLocks.acquire(key);
		return handle::close;
	}

	@Override
	public Held acquireWrite(String key) {
		LockHandle handle = this.writeLocks.acquire(key);
		return handle::close;
	}

	@Override
	public Held acquirePermit(String key, int permits) {
		LockHandle handle = this.semaphores.computeIfAbsent(permits, this.locks::withPermits).acquire(key);
		return handle::close;
	}

	@Override
	public void close() {
		this.locks.close();
		this.client.shutdown();
	}

}
