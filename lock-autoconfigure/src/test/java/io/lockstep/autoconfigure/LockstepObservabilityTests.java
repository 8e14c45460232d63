package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockMode;
import io.lockstep.LockLostException;
import io.lockstep.OnLocked;
import io.lockstep.actuate.LocksEndpoint;
import io.lockstep.actuate.LockstepHealthIndicator;
import io.lockstep.observation.DefaultLockObservationConvention;
import io.lockstep.observation.LockObservationContext;
import io.lockstep.observation.LockObservationConvention;
import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Metrics, the endpoint and health through the auto-configuration.
 */
@RedisTest
class LockstepObservabilityTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, ObservationAutoConfiguration.class,
				MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, LockstepObservationAutoConfiguration.class,
				LockstepAutoConfiguration.class, LockstepActuatorAutoConfiguration.class))
		.withUserConfiguration(ReportConfiguration.class);

	/** As in application.yml: {@code 812ms}, {@code 1.5s}; never ISO-8601. */
	private static final String DURATION = "\\d+ms|\\d+(\\.\\d{1,3})?s";

	private String redisPort;

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redisPort = "spring.data.redis.port=" + redis.port();
		this.contextRunner = this.contextRunner.withPropertyValues(this.redisPort, "lockstep.lease-time=900ms");
	}

	@Test
	void anUnnamedAnnotatedMethodIsMeasuredUnderClassAndMethodName() {
		this.contextRunner.run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			Reports reports = context.getBean(Reports.class);
			double activeInside = reports
				.build(() -> meters.get("lockstep.active").tag("lock", "Reports.build").gauge().value());
			assertThat(activeInside).isEqualTo(1.0);
			assertThat(meters.get("lockstep.acquire")
				.tag("lock", "Reports.build")
				.tag("outcome", "acquired")
				.timer()
				.count()).isEqualTo(1);
			assertThat(meters.get("lockstep.held").tag("lock", "Reports.build").timer().count()).isEqualTo(1);
			assertThat(meters.get("lockstep.active").tag("lock", "Reports.build").gauge().value()).isZero();
		});
	}

	@Test
	void aLostLeaseIsCountedByLockName(RedisNode redis) {
		this.contextRunner.run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			LockHandle lock = locks.named("orders").acquire("7");
			redis.call("DEL", "lockstep:orders:7");
			long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
			while (lock.isHeld() && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			assertThat(lock.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
			// counted by the thread that detected the loss, right after marking it: wait
			// for it (bounded)
			long counted = System.nanoTime() + Duration.ofSeconds(1).toNanos();
			while (meters.find("lockstep.lease.lost").counter() == null && System.nanoTime() < counted) {
				Thread.onSpinWait();
			}
			assertThat(meters.get("lockstep.lease.lost").tag("lock", "orders").counter().count()).isEqualTo(1);
		});
	}

	@Test
	void aUserConventionReplacesTheDefaultTags() {
		this.contextRunner.withBean(LockObservationConvention.class, TeamConvention::new).run((context) -> {
			context.getBean(Reports.class).build(() -> 0.0);
			assertThat(context.getBean(MeterRegistry.class)
				.get("lockstep.acquire")
				.tag("lock", "Reports.build")
				.tag("team", "inventory")
				.timer()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void theEndpointAndHealthArePresentAndBackOffWithoutActuator() {
		ApplicationContextRunner exposed = this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=health,locks");
		exposed.run((context) -> {
			assertThat(context).hasSingleBean(LocksEndpoint.class).hasSingleBean(LockstepHealthIndicator.class);
			assertThat(context.getBean(LockstepHealthIndicator.class).health(true).getStatus()).isEqualTo(Status.UP);
			AtomicReference<LocksEndpoint.HeldLocks> listed = new AtomicReference<>();
			context.getBean(Reports.class).build(() -> {
				listed.set(context.getBean(LocksEndpoint.class).locks());
				return 0.0;
			});
			assertThat(listed.get().locks()).singleElement().satisfies((lock) -> {
				assertThat(lock.key()).isEqualTo("lockstep:report");
				assertThat(lock.lockName()).isEqualTo("Reports.build");
				assertThat(lock.fencingToken()).isPositive();
			});
			assertThat(context.getBean(LocksEndpoint.class).lock("report").locked()).isFalse();
		});
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(LocksEndpoint.class));
		exposed.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).doesNotHaveBean(LocksEndpoint.class)
				.hasSingleBean(LockstepHealthIndicator.class));
		this.contextRunner.withPropertyValues("management.health.lockstep.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockstepHealthIndicator.class));
	}

	@Test
	void noLockMeterExistsBeforeFirstUseAndNoErrorSeriesWithoutAnError() {
		this.contextRunner.run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			List<String> atStart = lockMeters(meters);
			context.getBean(Reports.class).build(() -> 0.0);
			List<String> afterUse = lockMeters(meters);
			System.out.printf("lockstep meters at start-up: %s%nafter one locked call: %s%n", atStart, afterUse);
			assertThat(atStart).isEmpty();
			assertThat(afterUse).contains("lockstep.acquire{error=none,lock=Reports.build,outcome=acquired}",
					"lockstep.held{error=none,lock=Reports.build}", "lockstep.active{lock=Reports.build}");
			assertThat(afterUse).as("series that say error although nothing failed")
				.noneMatch((meter) -> meter.contains("outcome=error") || meter.contains("error=Lock"))
				.noneMatch((meter) -> meter.startsWith("lockstep.lease.lost") || meter.startsWith("lockstep.release"));
		});
	}

	/**
	 * A scheduled job with {@code onLocked = SKIP} finds the lock taken every period on
	 * all instances but one: that is no contention, and alerting on {@code timeout} must
	 * not see it.
	 */
	@Test
	void skipsHaveTheirOwnOutcomeAndTimeoutsKeepTheirs() {
		this.contextRunner.withBean(Jobs.class).run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			Jobs jobs = context.getBean(Jobs.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			try (OtherThread other = new OtherThread()) {
				LockHandle held = other.call(() -> locks.acquire("job"));
				try {
					assertThat(jobs.skip()).isNull();
					assertThat(jobs.skipAfterWaiting()).isNull();
					assertThat(jobs.skipReactively().block(Duration.ofSeconds(5))).isNull();
					assertThat(locks.tryExecute("job", (lock) -> "ran")).isEmpty();
					assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(jobs::waitAndThrow);
				}
				finally {
					other.call(() -> {
						held.close();
						return null;
					});
				}
			}
			List<String> recorded = lockMeters(meters);
			System.out.printf("lockstep.acquire after 4 skips and 1 timeout: %s%n", recorded);
			assertThat(outcomes(meters, "Jobs.skip")).containsExactly("skipped");
			assertThat(outcomes(meters, "Jobs.skipAfterWaiting")).containsExactly("skipped");
			assertThat(outcomes(meters, "Jobs.skipReactively")).containsExactly("skipped");
			assertThat(outcomes(meters, "default")).containsExactly("acquired", "skipped");
			assertThat(outcomes(meters, "Jobs.waitAndThrow")).containsExactly("timeout");
		});
	}

	/**
	 * Micrometer's {@code error} tag names an exception only where the acquisition failed
	 * ({@code outcome=error}); a timeout, a skip and an acquisition are
	 * {@code error=none}: the outcome says what happened (as the metrics page states).
	 */
	@Test
	void theErrorTagNamesTheExceptionOnlyForTheErrorOutcome() throws Exception {
		int closed;
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			closed = socket.getLocalPort();
		}
		this.contextRunner.withBean(Jobs.class).run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			try (OtherThread other = new OtherThread()) {
				LockHandle held = other.call(() -> locks.acquire("job"));
				try {
					assertThat(context.getBean(Jobs.class).skip()).isNull();
					assertThatExceptionOfType(LockAcquisitionException.class)
						.isThrownBy(context.getBean(Jobs.class)::waitAndThrow);
				}
				finally {
					other.call(() -> {
						held.close();
						return null;
					});
				}
			}
			assertThat(errorTags(meters)).containsEntry("acquired", List.of("none"))
				.containsEntry("skipped", List.of("none"))
				.containsEntry("timeout", List.of("none"));
		});
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + closed, "lockstep.command-timeout=300ms")
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThatExceptionOfType(io.lockstep.LockException.class)
					.isThrownBy(() -> context.getBean(LockTemplate.class).execute("down", (lock) -> "ran"));
				System.out.printf("error tags by outcome, Redis down: %s%n", errorTags(meters));
				assertThat(errorTags(meters)).containsOnlyKeys("error")
					.containsEntry("error", List.of("LockException"));
			});
	}

	/** The {@code error} tags of {@code lockstep.acquire}, by outcome. */
	private static java.util.Map<String, List<String>> errorTags(MeterRegistry meters) {
		return meters.find("lockstep.acquire")
			.timers()
			.stream()
			.filter((timer) -> timer.getId().getTag("outcome") != null && timer.count() > 0)
			.collect(Collectors
				.groupingBy((timer) -> timer.getId().getTag("outcome"), java.util.TreeMap::new, Collectors.mapping(
						(timer) -> timer.getId().getTag("error"),
						Collectors.collectingAndThen(Collectors.toCollection(java.util.TreeSet::new), List::copyOf))));
	}

	/** The outcomes of the lock name's acquisitions, each once per acquisition. */
	private static List<String> outcomes(MeterRegistry meters, String lockName) {
		return meters.find("lockstep.acquire")
			.tag("lock", lockName)
			.timers()
			.stream()
			.filter((timer) -> timer.getId().getTag("outcome") != null)
			.flatMap((timer) -> java.util.Collections.nCopies((int) timer.count(), timer.getId().getTag("outcome"))
				.stream())
			.sorted()
			.toList();
	}

	private static List<String> lockMeters(MeterRegistry meters) {
		return meters.getMeters()
			.stream()
			.map(Meter::getId)
			.filter((id) -> id.getName().startsWith("lockstep"))
			.map((id) -> id.getName() + id.getTags()
				.stream()
				.map((tag) -> tag.getKey() + "=" + tag.getValue())
				.collect(Collectors.joining(",", "{", "}")))
			.sorted()
			.toList();
	}

	@Test
	void theKeyEndpointTakesTheRedisKeyOrTheKeyWithoutPrefixAndWritesDurationsAsInYaml() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=locks").run((context) -> {
			LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			try (LockHandle lock = locks.named("orders").acquire("7")) {
				LocksEndpoint.KeyState full = endpoint.lock("lockstep:orders:7");
				LocksEndpoint.KeyState user = endpoint.lock("orders:7");
				LocksEndpoint.HeldLock held = endpoint.locks().locks().get(0);
				System.out.printf("/actuator/locks: %s%n/actuator/locks/lockstep:orders:7: %s%n"
						+ "/actuator/locks/orders:7: %s%n", held, full, user);
				assertThat(full.key()).isEqualTo("lockstep:orders:7");
				assertThat(full.locked()).isTrue();
				assertThat(user.key()).isEqualTo(full.key());
				assertThat(user.locked()).isTrue();
				assertThat(full.leaseRemaining()).matches(DURATION);
				assertThat(held.leaseRemaining()).matches(DURATION);
			}
			LocksEndpoint.KeyState released = endpoint.lock("orders:7");
			assertThat(released.locked()).isFalse();
			assertThat(released.leaseRemaining()).isNull();
		});
	}

	@Test
	void theEndpointListsEachReaderAndPermitHolderOnItsOwnWithItsMode() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=locks").run((context) -> {
			LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			try (LockHandle reader = locks.read().acquire("doc:8");
					LockHandle otherReader = CompletableFuture.supplyAsync(() -> locks.read().acquire("doc:8")).join();
					LockHandle permit = locks.withPermits(3).acquire("export:8")) {
				List<LocksEndpoint.HeldLock> held = endpoint.locks().locks();
				System.out.printf("/actuator/locks with 2 readers and 1 permit holder: %s%n", held);
				assertThat(held)
					.extracting(LocksEndpoint.HeldLock::key, LocksEndpoint.HeldLock::mode,
							LocksEndpoint.HeldLock::permits)
					.containsExactly(tuple("lockstep:doc:8", LockMode.READ, 1),
							tuple("lockstep:doc:8", LockMode.READ, 1), tuple("lockstep:export:8", LockMode.WRITE, 3));
				assertThat(held.get(1).fencingToken()).isGreaterThan(held.get(0).fencingToken());
			}
		});
	}

	@Test
	void withoutMicrometerLocksStillWork() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepObservationAutoConfiguration.class,
							LockstepAutoConfiguration.class, LockstepActuatorAutoConfiguration.class))
			.withUserConfiguration(ReportConfiguration.class)
			.withPropertyValues(this.redisPort)
			.withClassLoader(new FilteredClassLoader("io.micrometer.core", "io.micrometer.observation"))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RedisLockTemplate.class);
				assertThat(context.getBean(Reports.class).build(() -> 2.0)).isEqualTo(2.0);
			});
	}

	static class TeamConvention extends DefaultLockObservationConvention {

		@Override
		public KeyValues getLowCardinalityKeyValues(LockObservationContext context) {
			return super.getLowCardinalityKeyValues(context).and("team", "inventory");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ReportConfiguration {

		@Bean
		Reports reports() {
			return new Reports();
		}

	}

	public static class Jobs {

		@DistributedLock(key = "'job'", onLocked = OnLocked.SKIP)
		public String skip() {
			return "ran";
		}

		@DistributedLock(key = "'job'", onLocked = OnLocked.SKIP, waitTime = "50ms")
		public String skipAfterWaiting() {
			return "ran";
		}

		@DistributedLock(key = "'job'", onLocked = OnLocked.SKIP)
		public Mono<String> skipReactively() {
			return Mono.just("ran");
		}

		@DistributedLock(key = "'job'", waitTime = "50ms")
		public String waitAndThrow() {
			return "ran";
		}

	}

	public static class Reports {

		@DistributedLock(key = "'report'")
		public double build(java.util.function.DoubleSupplier inside) {
			return inside.getAsDouble();
		}

	}

}
