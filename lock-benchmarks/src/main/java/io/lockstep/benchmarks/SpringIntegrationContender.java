package io.lockstep.benchmarks;

import java.util.concurrent.locks.Lock;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * Spring Integration's {@link RedisLockRegistry} on a {@link LettuceConnectionFactory},
 * with its defaults (60 s expiry, no renewal scheduler) in one of its two waiting modes:
 * {@code SPIN_LOCK} (retry every 100 ms) or {@code PUB_SUB_LOCK}. The registry also keeps
 * a JVM-local {@code ReentrantLock} per key, so threads of one registry queue locally and
 * only one of them at a time talks to Redis.
 */
final class SpringIntegrationContender implements Contender {

	private final LettuceConnectionFactory connectionFactory;

	private final RedisLockRegistry registry;

	SpringIntegrationContender(RedisTarget redis, RedisLockType type) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.registry = new RedisLockRegistry(this.connectionFactory, "si-bench");
		this.registry.setRedisLockType(type);
	}

	@Override
	public Held acquire(String key) {
		Lock lock = this.registry.obtain(key);
		lock.lock();
		return lock::unlock;
	}

	@Override
	public void close() {
		this.registry.destroy();
		this.connectionFactory.destroy();
	}

}
