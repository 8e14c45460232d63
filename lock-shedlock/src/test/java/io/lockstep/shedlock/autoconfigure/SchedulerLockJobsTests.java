package io.lockstep.shedlock.autoconfigure;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLocks;
import io.lockstep.actuate.LocksEndpoint;
import io.lockstep.autoconfigure.LockstepActuatorAutoConfiguration;
import io.lockstep.autoconfigure.LockstepAutoConfiguration;
import io.lockstep.autoconfigure.LockstepObservationAutoConfiguration;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of an application (two application contexts, each with its own Redis
 * client) on one real Redis, each running the same {@code @Scheduled @SchedulerLock} job
 * every 20 ms, with nothing but ShedLock's own annotations and the auto-configured
 * provider: the runs never overlap, {@code LockAssert.assertLocked()} passes in each,
 * their fencing tokens increase run after run, and the job shows under its ShedLock name
 * in the meters and the {@code locks} endpoint.
 */
@RedisTest
class SchedulerLockJobsTests {

	private static final int RUNS = 60;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, ObservationAutoConfiguration.class,
				MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, LockstepObservationAutoConfiguration.class,
				LockstepAutoConfiguration.class, LockstepActuatorAutoConfiguration.class,
				LockstepShedLockAutoConfiguration.class, TaskSchedulingAutoConfiguration.class))
		.withUserConfiguration(SchedulingConfiguration.class, ReportJob.class)
		// a first lock of a context connects first: room for that on a loaded machine
		.withPropertyValues("lockstep.command-timeout=5s", "management.endpoints.web.exposure.include=locks");

	@Test
	void twoInstancesNeverRunTheJobAtOnce(RedisNode redis) {
		Runs runs = new Runs();
		ApplicationContextRunner instance = this.contextRunner
			.withPropertyValues("spring.data.redis.port=" + redis.port())
			.withBean(Runs.class, () -> runs);
		instance.withBean(Instance.class, () -> new Instance(1)).run((first) -> {
			assertThat(first).hasNotFailed();
			instance.withBean(Instance.class, () -> new Instance(2)).run((second) -> {
				assertThat(second).hasNotFailed();
				assertThat(runs.done.await(60, TimeUnit.SECONDS)).as("%d runs within 60 s", RUNS).isTrue();
				runs.stop();
				long acquired = acquisitions(first, "acquired") + acquisitions(second, "acquired");
				long skipped = acquisitions(first, "skipped") + acquisitions(second, "skipped");
				System.out
					.printf("@SchedulerLock job every 20 ms on 2 instances: %d runs (instance 1: %d, instance 2: %d); "
							+ "overlaps %d, LockAssert failures %d, fencing tokens out of order %d, "
							+ "runs the locks endpoint did not list %d; lockstep.acquire{lock=report}: %d acquired, "
							+ "%d skipped%n", runs.total.get(), runs.byInstance[1].get(), runs.byInstance[2].get(),
							runs.overlaps.get(), runs.unlocked.get(), runs.tokensOutOfOrder.get(),
							runs.endpointFailures.get(), acquired, skipped);
				assertThat(runs.overlaps).hasValue(0);
				assertThat(runs.unlocked).as("LockAssert.assertLocked() failures").hasValue(0);
				assertThat(runs.tokensOutOfOrder).hasValue(0);
				assertThat(runs.endpointFailures).as("runs the locks endpoint did not list").hasValue(0);
				assertThat(runs.byInstance[1].get()).isPositive();
				assertThat(runs.byInstance[2].get()).isPositive();
				assertThat(acquired).isGreaterThanOrEqualTo(RUNS);
				assertThat(skipped).as("the instances met at the lock").isPositive();
				// a hold is timed at its release: the last run's may still be on its way
				assertThat(held(first) + held(second)).as("lockstep.held{lock=report}")
					.isGreaterThanOrEqualTo(RUNS - 1);
				assertThat(first.getBean(MeterRegistry.class).find("lockstep.acquire").tag("lock", "shedlock").meters())
					.as("reported under the job's name, not the key's namespace")
					.isEmpty();
			});
		});
	}

	private static long acquisitions(ApplicationContext context, String outcome) {
		Timer timer = context.getBean(MeterRegistry.class)
			.find("lockstep.acquire")
			.tag("lock", "report")
			.tag("outcome", outcome)
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	private static long held(ApplicationContext context) {
		Timer timer = context.getBean(MeterRegistry.class).find("lockstep.held").tag("lock", "report").timer();
		return (timer != null) ? timer.count() : 0;
	}

	/** Which instance an application context is. */
	record Instance(int id) {
	}

	/** What the runs of the job saw, across both instances. */
	static final class Runs {

		final CountDownLatch done = new CountDownLatch(RUNS);

		final AtomicInteger total = new AtomicInteger();

		final AtomicInteger[] byInstance = { null, new AtomicInteger(), new AtomicInteger() };

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger overlaps = new AtomicInteger();

		final AtomicInteger unlocked = new AtomicInteger();

		final AtomicLong lastToken = new AtomicLong();

		final AtomicInteger tokensOutOfOrder = new AtomicInteger();

		final AtomicInteger endpointFailures = new AtomicInteger();

		private volatile boolean stopped;

		void stop() {
			this.stopped = true;
		}

		void run(Instance instance, LocksEndpoint endpoint) throws InterruptedException {
			if (this.stopped) {
				return;
			}
			if (this.inside.incrementAndGet() != 1) {
				this.overlaps.incrementAndGet();
			}
			try {
				LockAssert.assertLocked();
			}
			catch (IllegalStateException ex) {
				this.unlocked.incrementAndGet();
			}
			long token = DistributedLocks.currentFencingToken().orElse(0);
			if (token <= this.lastToken.get()) {
				this.tokensOutOfOrder.incrementAndGet();
			}
			this.lastToken.set(token);
			AtomicReference<String> shown = new AtomicReference<>("none");
			boolean listed = endpoint.locks().locks().stream().anyMatch((lock) -> {
				shown.set(lock.toString());
				return lock.key().equals("lockstep:shedlock:report") && lock.lockName().equals("report")
						&& lock.fencingToken() == token;
			});
			if (!listed) {
				System.out.println("locks endpoint did not list the job's lock: " + shown.get());
				this.endpointFailures.incrementAndGet();
			}
			// the job's work: long enough for the other instance's attempts to meet it
			TimeUnit.MILLISECONDS.sleep(10);
			this.inside.decrementAndGet();
			this.byInstance[instance.id()].incrementAndGet();
			this.total.incrementAndGet();
			this.done.countDown();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	@EnableSchedulerLock(defaultLockAtMostFor = "10s")
	static class SchedulingConfiguration {

	}

	static class ReportJob {

		private final Runs runs;

		private final Instance instance;

		private final LocksEndpoint endpoint;

		ReportJob(Runs runs, Instance instance, LocksEndpoint endpoint) {
			this.runs = runs;
			this.instance = instance;
			this.endpoint = endpoint;
		}

		@Scheduled(fixedDelay = 20)
		@SchedulerLock(name = "report", lockAtMostFor = "5s")
		public void run() throws InterruptedException {
			this.runs.run(this.instance, this.endpoint);
		}

	}

}
