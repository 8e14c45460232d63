package io.lockstep.benchmarks;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.redis.RedisLockTemplate;

/**
 * Lockstep as an application gets it: {@link RedisLockTemplate} on a Lettuce
 * {@link RedisClient}, watchdog lease (30 s, renewed while held), fencing tokens, release
 * notification. Whatever the engine of this build does is what is measured.
 */
final class LockstepContender implements Contender {

	private final RedisClient client;

	private final RedisLockTemplate locks;

	LockstepContender(RedisTarget redis) {
		this.client = RedisClient.create(redis.uri());
		this.locks = RedisLockTemplate.builder(this.client).waitTime(Duration.ofMinutes(1)).build();
	}

	@Override
	public Held acquire(String key) {
		LockHandle handle = this.locks.acquire(key);
		return handle::close;
	}

	@Override
	public void close() {
		this.locks.close();
		this.client.shutdown();
	}

}
