package io.lockstep.autoconfigure;

import io.lockstep.test.RedisNode;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The set-up of a starter test against a real Redis (a {@code @RedisTest}): before each
 * test, the fixture's node and a context runner with Spring Data Redis and Lockstep's
 * auto-configuration on that node, under a key prefix of the test's own.
 */
abstract class AbstractRedisStarterTests {

	private final String keyPrefix;

	ApplicationContextRunner contextRunner;

	RedisNode redis;

	AbstractRedisStarterTests(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redis = redis;
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
			.withPropertyValues("lockstep.key-prefix=" + this.keyPrefix)
			.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

}
