package io.lockstep.sample;

import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * Base of the sample's application tests: one real redis-server process per test class,
 * set as {@code spring.data.redis.*} (so the embedded Redis stays off), killed after the
 * class.
 */
@DirtiesContext
@TestPropertySource(properties = "sample.embedded-redis=false")
abstract class RealRedis {

	private static RedisFixture fixture;

	static RedisNode redis;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		fixture = new RedisFixture();
		redis = fixture.standalone();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		fixture.close();
	}

}
