package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lockstep.DistributedLock;
import io.lockstep.LockMonitor;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of an application (two application contexts, each with its own Redis
 * client) on one real Redis, each scheduling the same quick job every 500 ms with
 * {@code onLocked = SKIP}: with {@code minHoldTime = "4s"} the job runs once per 4 s
 * across both; without it, on every instance in turn.
 */
@RedisTest
class ScheduledJobsTests {

	private static final Duration WINDOW = Duration.ofSeconds(12);

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withUserConfiguration(SchedulingConfiguration.class);

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@Test
	void withAMinimumHoldTheJobRunsOncePerHoldAcrossBothInstances() {
		List<Run> runs = runTwoInstances(HeldReport.class, "scheduled-held:");
		List<Long> ttls = runs.stream().map(Run::ttlAfterReturn).toList();
		System.out.printf(
				"minHoldTime 4s, fixedRate 500ms, 2 instances, %d s: %d runs (instance 1: %d, instance 2: "
						+ "%d); key TTL right after each run returned: %s ms%n",
				WINDOW.toSeconds(), runs.size(), count(runs, 1), count(runs, 2), ttls);
		assertThat(runs).hasSizeBetween(2, 4);
		assertThat(ttls).as("the key outlives the method's return")
			.allSatisfy((ttl) -> assertThat(ttl).isBetween(1000L, 4000L));
	}

	@Test
	void withoutAMinimumHoldEveryInstanceRunsTheJobInTurn() {
		List<Run> runs = runTwoInstances(PlainReport.class, "scheduled-plain:");
		long gone = runs.stream().filter((run) -> run.ttlAfterReturn() < 0).count();
		System.out.printf(
				"no minHoldTime, fixedRate 500ms, 2 instances, %d s: %d runs (instance 1: %d, instance 2: "
						+ "%d); key gone right after %d of them%n",
				WINDOW.toSeconds(), runs.size(), count(runs, 1), count(runs, 2), gone);
		assertThat(runs).hasSizeGreaterThan(12);
		assertThat(count(runs, 1)).isPositive();
		assertThat(count(runs, 2)).isPositive();
		// the other instance may take the key between the release and the read
		assertThat(gone).isGreaterThanOrEqualTo(runs.size() * 8 / 10);
	}

	/** Starts two instances, and returns the runs that started during the window. */
	private List<Run> runTwoInstances(Class<?> job, String keyPrefix) {
		List<Run> runs = new CopyOnWriteArrayList<>();
		ApplicationContextRunner instance = this.contextRunner.withUserConfiguration(job)
			.withPropertyValues("lockstep.key-prefix=" + keyPrefix);
		instance.withBean(RunLog.class, () -> new RunLog(1, runs)).run((first) -> {
			assertThat(first).hasNotFailed();
			instance.withBean(RunLog.class, () -> new RunLog(2, runs)).run((second) -> {
				assertThat(second).hasNotFailed();
				long from = System.nanoTime();
				// models the window both instances run side by side (the runs are
				// counted in it; not synchronisation)
				Thread.sleep(WINDOW.toMillis());
				long to = System.nanoTime();
				runs.removeIf((run) -> run.startedNanos() - from < 0 || run.startedNanos() - to >= 0);
			});
		});
		return List.copyOf(runs);
	}

	private static long count(List<Run> runs, int instance) {
		return runs.stream().filter((run) -> run.instance() == instance).count();
	}

	/** One run of the job: where, when it started, and the key's TTL once it returned. */
	record Run(int instance, long startedNanos, long ttlAfterReturn) {
	}

	/** The runs of one instance's job; used on its scheduler's single thread. */
	static class RunLog {

		private final int instance;

		private final List<Run> runs;

		private long started;

		RunLog(int instance, List<Run> runs) {
			this.instance = instance;
			this.runs = runs;
		}

		void started() {
			this.started = System.nanoTime();
		}

		/** Runs a scheduled invocation; records it when the job ran (was not skipped). */
		void invoke(Runnable invocation, LockMonitor locks) {
			this.started = 0;
			invocation.run();
			if (this.started != 0) {
				long ttl = locks.leaseRemaining("report").map(Duration::toMillis).orElse(-1L);
				this.runs.add(new Run(this.instance, this.started, ttl));
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class SchedulingConfiguration {

		/**
		 * Reads the lock's TTL right after each invocation returned through the proxy.
		 */
		@Bean
		ThreadPoolTaskScheduler taskScheduler(ObjectProvider<RunLog> log, ObjectProvider<LockMonitor> locks) {
			ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
			scheduler.setTaskDecorator((task) -> () -> log.getObject().invoke(task, locks.getObject()));
			return scheduler;
		}

	}

	static class HeldReport {

		private final RunLog log;

		HeldReport(RunLog log) {
			this.log = log;
		}

		@Scheduled(fixedRate = 500)
		@DistributedLock(key = "'report'", minHoldTime = "4s", onLocked = OnLocked.SKIP)
		public void run() throws InterruptedException {
			this.log.started();
			// models the job's work of 20 ms
			TimeUnit.MILLISECONDS.sleep(20);
		}

	}

	static class PlainReport {

		private final RunLog log;

		PlainReport(RunLog log) {
			this.log = log;
		}

		@Scheduled(fixedRate = 500)
		@DistributedLock(key = "'report'", onLocked = OnLocked.SKIP)
		public void run() throws InterruptedException {
			this.log.started();
			// models the job's work of 20 ms
			TimeUnit.MILLISECONDS.sleep(20);
		}

	}

}
