package io.lockstep.testcontainers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter against a Redis run by Testcontainers: locks exclude each other and issue
 * strictly increasing fencing tokens.
 */
@Testcontainers
@SpringBootTest
@DirtiesContext // closes the context before the container stops (extensions end in
				// reverse)
class RedisContainerLockTests {

	private static final int PORT = RedisContainers.freePort();

	private static final int THREADS = 4;

	private static final int ROUNDS = 250;

	@Container
	static final GenericContainer<?> redis = RedisContainers.onHostNetwork(PORT);

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> PORT);
	}

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@Autowired
	private StringRedisTemplate redisTemplate;

	@Test
	void connectsToTheContainer() {
		assertThat(redis.isRunning()).isTrue();
		assertThat(this.connectionFactory).isInstanceOfSatisfying(LettuceConnectionFactory.class, (factory) -> {
			assertThat(factory.getHostName()).isEqualTo("127.0.0.1");
			assertThat(factory.getPort()).isEqualTo(PORT);
		});
		Properties server = this.redisTemplate
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("server"));
		assertThat(server).containsEntry("tcp_port", String.valueOf(PORT));
		// Valkey names itself (server_name, valkey_version); Redis has redis_version only
		String name = server.getProperty("server_name", "redis");
		System.out.printf("container of %s runs %s-server %s%n", redis.getDockerImageName(), name,
				server.getProperty(name + "_version"));
	}

	@Test
	void locksExcludeEachOtherAndIssueStrictlyIncreasingFencingTokens() throws Exception {
		try (RedisLockTemplate template = RedisLockTemplate.builder(this.connectionFactory).build()) {
			LockTemplate locks = template.withWaitTime(Duration.ofSeconds(30));
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
			ExecutorService pool = Executors.newFixedThreadPool(THREADS);
			try {
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < THREADS; t++) {
					workers.add(pool.submit(() -> {
						for (int i = 0; i < ROUNDS; i++) {
							locks.execute("tc:counter", (lock) -> {
								if (inside.incrementAndGet() != 1) {
									overlaps.incrementAndGet();
								}
								tokens.add(lock.fencingToken());
								incrementByReadThenWrite("tc:count");
								inside.decrementAndGet();
								return null;
							});
						}
						return null;
					}));
				}
				for (Future<?> worker : workers) {
					worker.get(2, TimeUnit.MINUTES);
				}
			}
			finally {
				pool.shutdownNow();
			}
			assertThat(overlaps).hasValue(0);
			assertThat(this.redisTemplate.opsForValue().get("tc:count")).isEqualTo(String.valueOf(THREADS * ROUNDS));
			assertThat(tokens).hasSize(THREADS * ROUNDS).isSorted().doesNotHaveDuplicates();
			assertThat(locks.isLocked("tc:counter")).isFalse();
		}
	}

	/** A lost-update-prone increment: only the lock keeps two of them apart. */
	private void incrementByReadThenWrite(String key) {
		String value = this.redisTemplate.opsForValue().get(key);
		int next = ((value != null) ? Integer.parseInt(value) : 0) + 1;
		this.redisTemplate.opsForValue().set(key, String.valueOf(next));
	}

}
