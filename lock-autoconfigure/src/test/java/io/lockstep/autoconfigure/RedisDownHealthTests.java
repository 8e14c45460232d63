package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.actuate.LockstepHealthIndicator;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis down or frozen, at start-up and later: the application starts, the
 * {@code lockstep} health is DOWN within the command timeout with the reason, guarded
 * calls fail with a {@link LockException} naming the cause (the guarded work does not
 * run), and locks work again once Redis answers, without a restart.
 */
@RedisTest
class RedisDownHealthTests {

	/** A third of the 3 s lease. */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(1);

	/** Generous: other builds share the 2 cores. */
	private static final Duration MARGIN = Duration.ofMillis(1500);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class,
				LockstepActuatorAutoConfiguration.class))
		.withUserConfiguration(JobConfiguration.class)
		.withPropertyValues("lockstep.lease-time=3s", "lockstep.wait-time=300ms");

	@Test
	void startsWhileRedisIsDownReportsDownFailsClearlyAndLocksOnceRedisIsBack(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		redis.kill();
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			assertThat(context).hasNotFailed();
			Timed<Health> down = health(context);
			System.out.printf("redis down at start-up: health %s in %d ms, details %s%n", down.value().getStatus(),
					down.millis(), down.value().getDetails());
			assertThat(down.value().getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.value().getDetails()).containsKey("reason");
			assertThat(down.value().getDetails().get("reason").toString()).contains(String.valueOf(redis.port()));
			assertThat(down.millis()).isLessThan(COMMAND_TIMEOUT.plus(MARGIN).toMillis());

			LockTemplate locks = context.getBean(LockTemplate.class);
			AtomicBoolean ran = new AtomicBoolean();
			assertThatExceptionOfType(LockException.class)
				.isThrownBy(() -> locks.execute("orders", (lock) -> ran.getAndSet(true)))
				.isNotInstanceOf(LockAcquisitionException.class)
				.withMessageContaining("lockstep:orders")
				.withMessageContaining("connect")
				.satisfies((ex) -> System.out.printf("redis down: guarded call failed with: %s%n", ex.getMessage()));
			Job job = context.getBean(Job.class);
			assertThatExceptionOfType(LockException.class).isThrownBy(job::run)
				.isNotInstanceOf(LockAcquisitionException.class)
				.withMessageContaining("lockstep:job");
			assertThat(ran).isFalse();
			assertThat(job.runs()).isZero();

			long restarted = System.nanoTime();
			redis.restart();
			long servedAfter = awaitLocked(locks, Duration.ofSeconds(2));
			System.out.printf("redis back: locked call served %d ms after redis-server answered%n", servedAfter);
			assertThat(servedAfter).isLessThan(2_000);
			job.run();
			assertThat(job.runs()).isOne();
			Timed<Health> up = health(context);
			System.out.printf("redis back: health %s in %d ms (%d ms after restart), details %s%n",
					up.value().getStatus(), up.millis(), (System.nanoTime() - restarted) / 1_000_000,
					up.value().getDetails());
			assertThat(up.value().getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void startsWhileRedisIsFrozenAndAnswersWithinTheCommandTimeout(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		redis.pause();
		try {
			this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
				assertThat(context).hasNotFailed();
				Timed<Health> down = health(context);
				System.out.printf("redis frozen at start-up: health %s in %d ms, details %s%n",
						down.value().getStatus(), down.millis(), down.value().getDetails());
				assertThat(down.value().getStatus()).isEqualTo(Status.DOWN);
				assertThat(down.millis()).isLessThan(COMMAND_TIMEOUT.plus(MARGIN).toMillis());

				LockTemplate locks = context.getBean(LockTemplate.class);
				long start = System.nanoTime();
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("frozen"))
					.withMessageContaining("did not answer within 1s");
				long failedAfter = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("redis frozen at start-up: tryAcquire failed after %d ms%n", failedAfter);
				assertThat(failedAfter).isLessThan(COMMAND_TIMEOUT.plus(MARGIN).toMillis());

				redis.resume();
				long servedAfter = awaitLocked(locks, Duration.ofSeconds(2));
				System.out.printf("redis resumed: locked call served %d ms after%n", servedAfter);
				assertThat(health(context).value().getStatus()).isEqualTo(Status.UP);
			});
		}
		finally {
			if (redis.isRunning()) {
				redis.resume();
			}
		}
	}

	@Test
	void healthIsDownWithinTheCommandTimeoutWhileRedisIsFrozenAndUpAfter(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			Timed<Health> before = health(context);
			assertThat(before.value().getStatus()).isEqualTo(Status.UP);
			assertThat(before.value().getDetails()).containsKey("responseTime");
			Timed<Health> frozen;
			redis.pause();
			try {
				frozen = health(context);
			}
			finally {
				redis.resume();
			}
			Timed<Health> after = health(context);
			System.out.printf("health: %s (%s), %s in %d ms while frozen (%s), %s after (%s)%n",
					before.value().getStatus(), before.value().getDetails(), frozen.value().getStatus(),
					frozen.millis(), frozen.value().getDetails().get("reason"), after.value().getStatus(),
					after.value().getDetails());
			assertThat(frozen.value().getStatus()).isEqualTo(Status.DOWN);
			assertThat(frozen.value().getDetails().get("reason").toString()).contains("Redis did not answer within 1s");
			assertThat(frozen.millis()).isLessThan(COMMAND_TIMEOUT.plus(MARGIN).toMillis());
			assertThat(after.value().getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void healthIsUpAgainOnceRedisAnswersWhateverIsHeldAfterARenewalAndAReleaseFailed(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			LockTemplate locks = context.getBean(LockTemplate.class);
			awaitLocked(locks, Duration.ofSeconds(10)); // connected and warm
			LockHandle held = locks.acquire("held-through-the-outage");
			redis.pause();
			try {
				// the first renewal is sent a third of the 3 s lease in and fails a
				// command
				// timeout later
				LockMonitor monitor = context.getBean(LockMonitor.class);
				await().atMost(Duration.ofSeconds(5)).until(() -> monitor.lastRenewalFailure() != null);
				held.close(); // the release fails too (left to expire and retried)
			}
			finally {
				redis.resume();
			}
			awaitLocked(locks, Duration.ofSeconds(2));
			// short holds never renew: health must not wait for a renewal to say UP again
			int polls = 24;
			int down = 0;
			String firstDown = null;
			for (int i = 0; i < polls; i++) {
				Health whileHolding = locks.execute("short", (lock) -> health(context).value());
				if (whileHolding.getStatus() != Status.UP) {
					down++;
					firstDown = (firstDown != null) ? firstDown : whileHolding.getDetails().toString();
				}
			}
			System.out.printf("after the outage: %d of %d polls while holding a short lock were not UP (first: %s)%n",
					down, polls, firstDown);
			assertThat(down).as("polls not UP, first: %s", firstDown).isZero();
		});
	}

	private static Timed<Health> health(AssertableApplicationContext context) {
		long start = System.nanoTime();
		Health health = context.getBean(LockstepHealthIndicator.class).health(true);
		return new Timed<>(health, (System.nanoTime() - start) / 1_000_000);
	}

	/**
	 * Tries a locked call every 20 ms until it runs; returns after how many milliseconds.
	 */
	private static long awaitLocked(LockTemplate locks, Duration timeout) {
		long start = System.nanoTime();
		await("a locked call runs").atMost(timeout)
			.pollInterval(Duration.ofMillis(20))
			.ignoreExceptionsInstanceOf(LockException.class)
			.until(() -> locks.tryExecute("back", LockHandle::key).isPresent());
		return (System.nanoTime() - start) / 1_000_000;
	}

	record Timed<T>(T value, long millis) {
	}

	@Configuration(proxyBeanMethods = false)
	static class JobConfiguration {

		@Bean
		Job job() {
			return new Job();
		}

	}

	public static class Job {

		private final AtomicInteger runs = new AtomicInteger();

		@DistributedLock(key = "'job'")
		public void run() {
			this.runs.incrementAndGet();
		}

		public int runs() {
			return this.runs.get();
		}

	}

}
