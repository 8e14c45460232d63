package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.LockException;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code lockstep.command-timeout}: set, or following Spring Boot's
 * {@code spring.data.redis.timeout}, else 2s; never more than a third of the shortest
 * lease.
 */
@RedisTest
class CommandTimeoutTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@Test
	void defaultsToTwoSecondsShortenedToAThirdOfTheShortestLease() {
		this.contextRunner.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(2)));
		this.contextRunner.withPropertyValues("lockstep.lease-time=3s")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(1)));
		this.contextRunner.withPropertyValues("lockstep.locks.fast.lease-time=600ms")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofMillis(200)));
	}

	@Test
	void followsSpringDataRedisTimeoutShortenedToAThirdOfTheShortestLease() {
		this.contextRunner.withPropertyValues("spring.data.redis.timeout=750ms")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofMillis(750)));
		this.contextRunner.withPropertyValues("spring.data.redis.timeout=5s")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(5)));
		this.contextRunner.withPropertyValues("spring.data.redis.timeout=5s", "lockstep.lease-time=6s")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(2)));
	}

	@Test
	void lockstepCommandTimeoutWinsOverSpringDataRedisTimeout() {
		this.contextRunner.withPropertyValues("lockstep.command-timeout=300ms", "spring.data.redis.timeout=5s")
			.run((context) -> {
				assertThat(context.getBean(LockstepProperties.class).getCommandTimeout())
					.isEqualTo(Duration.ofMillis(300));
				assertThat(commandTimeout(context)).isEqualTo(Duration.ofMillis(300));
			});
	}

	@Test
	void aCommandTimeoutLongerThanAThirdOfTheShortestLeaseFailsStartUpNamingBothProperties() {
		this.contextRunner.withPropertyValues("lockstep.command-timeout=2s", "lockstep.locks.fast.lease-time=3s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(LockConfigurationException.class)
				.hasMessage("lockstep.command-timeout (2s) must not exceed a third of the shortest lease, "
						+ "lockstep.locks.fast.lease-time (3s): a renewal sent at a third of the lease must be able "
						+ "to time out and be retried before the lease ends"));
		this.contextRunner.withPropertyValues("lockstep.command-timeout=0s")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("lockstep.command-timeout must be between 1ms and 1m, got 0s"));
	}

	@Test
	void withRedlockSpringDataRedisTimeoutDoesNotApply(RedisFixture fixture) {
		List<RedisNode> masters = fixture.masters(3, "--appendonly", "yes");
		ApplicationContextRunner redlock = this.contextRunner.withPropertyValues("spring.data.redis.timeout=5s",
				"lockstep.redlock.nodes=" + masters.get(0).uri() + "," + masters.get(1).uri() + ","
						+ masters.get(2).uri());
		redlock.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(2)));
		redlock.withPropertyValues("lockstep.command-timeout=1s")
			.run((context) -> assertThat(commandTimeout(context)).isEqualTo(Duration.ofSeconds(1)));
	}

	/**
	 * The property is the bound a user meets: a Redis that stops answering fails the
	 * health check within it, not within the 2 s default.
	 */
	@Test
	void aRedisThatDoesNotAnswerFailsWithinTheCommandTimeout(RedisNode redis) {
		this.contextRunner.withPropertyValues("lockstep.command-timeout=300ms").run((context) -> {
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			locks.ping(); // connected
			redis.pause();
			try {
				long start = System.nanoTime();
				assertThatExceptionOfType(LockException.class).isThrownBy(locks::ping)
					.withMessageContaining("did not answer within 300ms");
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("ping of a paused Redis with lockstep.command-timeout=300ms failed after %d ms%n",
						millis);
				assertThat(millis).isBetween(250L, 1_500L);
			}
			finally {
				redis.resume();
			}
		});
	}

	private static Duration commandTimeout(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		return EngineTemplate.of(context.getBean(RedisLockTemplate.class)).engine().store().commandTimeout();
	}

}
