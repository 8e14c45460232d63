package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code onLocked = SKIP} without a wait time of its own does not wait (not
 * {@code lockstep.wait-time}); an explicit {@code waitTime}, or the lock name's
 * {@code wait-time}, is still honoured; {@code THROW} still waits
 * {@code lockstep.wait-time}.
 */
@RedisTest
class SkipWaitTimeTests {

	private final ExecutorService otherInstance = Executors.newSingleThreadExecutor();

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withBean(Jobs.class)
		.withPropertyValues("lockstep.key-prefix=skip-wait:", "lockstep.wait-time=3s",
				"lockstep.locks.patient.wait-time=5s");

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@AfterEach
	void stopOtherInstance() {
		this.otherInstance.shutdownNow();
	}

	@Test
	void skipWithoutAWaitTimeSkipsAtOnce() {
		this.contextRunner.run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			try (Holder held = holdElsewhere(locks, "now")) {
				long start = System.nanoTime();
				assertThat(jobs.skipAtOnce("now")).isNull();
				long waited = millis(System.nanoTime() - start);
				System.out.printf("SKIP without waitTime, lockstep.wait-time=3s, held elsewhere: skipped after %d ms%n",
						waited);
				assertThat(waited).as("no wait for lockstep.wait-time").isLessThan(1500);
			}
			assertThat(jobs.skipAtOnce("now")).isEqualTo("ran now");
		});
	}

	@Test
	void skipWithAnExplicitWaitTimeWaitsForTheLock() {
		this.contextRunner.run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			Holder held = holdElsewhere(locks, "later");
			held.releaseAfter(Duration.ofMillis(300));
			long start = System.nanoTime();
			assertThat(jobs.skipAfterWaiting("later")).as("ran once the holder released").isEqualTo("ran later");
			System.out.printf("SKIP with waitTime = \"5s\", released after 300 ms: ran after %d ms%n",
					millis(System.nanoTime() - start));
			held.close();
		});
	}

	@Test
	void skipWithAWaitTimeForItsNameWaitsForTheLock() {
		this.contextRunner.run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			Holder held = holdElsewhere(locks.named("patient"), "named");
			held.releaseAfter(Duration.ofMillis(300));
			assertThat(jobs.skipAfterNamedWait("named")).as("lockstep.locks.patient.wait-time=5s applies")
				.isEqualTo("ran named");
			held.close();
		});
	}

	@Test
	void throwWithoutAWaitTimeStillWaitsForTheDefaultWaitTime() {
		this.contextRunner.withPropertyValues("lockstep.wait-time=1s").run((context) -> {
			Jobs jobs = context.getBean(Jobs.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			try (Holder held = holdElsewhere(locks, "busy")) {
				long start = System.nanoTime();
				assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> jobs.orThrow("busy"));
				long waited = millis(System.nanoTime() - start);
				System.out.printf("THROW without waitTime, lockstep.wait-time=1s: threw after %d ms%n", waited);
				assertThat(waited).isGreaterThanOrEqualTo(900);
			}
		});
	}

	/** Holds the lock on a thread of its own, as another instance would. */
	private Holder holdElsewhere(LockTemplate locks, String key) throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		Future<?> holder = this.otherInstance.submit(() -> {
			try (LockHandle lock = locks.acquire(key)) {
				held.countDown();
				release.await(30, TimeUnit.SECONDS);
			}
			return null;
		});
		assertThat(held.await(10, TimeUnit.SECONDS)).as("held elsewhere").isTrue();
		return new Holder(release, holder);
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

	/** Releases the lock held elsewhere. */
	record Holder(CountDownLatch release, Future<?> holder) implements AutoCloseable {

		void releaseAfter(Duration delay) {
			CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS).execute(this.release::countDown);
		}

		@Override
		public void close() throws Exception {
			this.release.countDown();
			this.holder.get(10, TimeUnit.SECONDS);
		}

	}

	static class Jobs {

		@DistributedLock(key = "#key", onLocked = OnLocked.SKIP)
		public String skipAtOnce(String key) {
			return "ran " + key;
		}

		@DistributedLock(key = "#key", waitTime = "5s", onLocked = OnLocked.SKIP)
		public String skipAfterWaiting(String key) {
			return "ran " + key;
		}

		@DistributedLock(key = "#key", name = "patient", onLocked = OnLocked.SKIP)
		public String skipAfterNamedWait(String key) {
			return "ran " + key;
		}

		@DistributedLock(key = "#key")
		public String orThrow(String key) {
			return "ran " + key;
		}

	}

}
