package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@code RLock} with its defaults: {@code lock()} without a lease time, so the
 * watchdog (30 s, renewed every 10 s) keeps it; waiters are woken through its pub/sub
 * channel per lock.
 */
final class RedissonContender implements Contender {

	private final RedissonClient redisson;

	RedissonContender(RedisTarget redis) {
		Config config = new Config();
		config.useSingleServer().setAddress(redis.uri());
		this.redisson = Redisson.create(config);
	}

	@Override
	public Held acquire(String key) {
		RLock lock = this.redisson.getLock(key);
		lock.lock();
		return lock::unlock;
	}

	@Override
	public void close() {
		this.redisson.shutdown(0, 2, TimeUnit.SECONDS);
	}

}
