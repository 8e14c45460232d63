package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.RedisClient;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.observation.LockObservationContext;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Observations become timers tagged by lock name and outcome, never by the evaluated key.
 */
@RedisTest
class ObservationTests {

	private final RedisNode redis;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final List<Observation.Event> events = new CopyOnWriteArrayList<>();

	private RedisClient client;

	private RedisLockTemplate locks;

	ObservationTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(this.meters));
		registry.observationConfig().observationHandler(new ObservationHandler<>() {
			@Override
			public void onEvent(Observation.Event event, Observation.Context context) {
				ObservationTests.this.events.add(event);
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return context instanceof LockObservationContext;
			}
		});
		this.client = TestLocks.client(this.redis);
		this.locks = TestLocks.builder(this.client)
			.leaseTime(Duration.ofMillis(900))
			.commandTimeout(Duration.ofMillis(250))
			.observationRegistry(registry, null)
			.build();
	}

	@AfterEach
	void disconnect() {
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void acquisitionsAreTimedByLockNameAndOutcome() {
		RedisLockTemplate orders = this.locks.named("orders");
		orders.execute("1", (lock) -> null);
		try (LockHandle held = orders.acquire("2");
				RedisLockTemplate otherClient = TestLocks.builder(this.client).build();
				LockHandle reentered = orders.withWaitTime(Duration.ofMillis(50)).acquire("2")) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> otherClient.named("orders").withWaitTime(Duration.ZERO).acquire("2"));
			assertThat(reentered.fencingToken()).isEqualTo(held.fencingToken());
			assertThat(this.locks.heldLocks()).singleElement().satisfies((info) -> {
				assertThat(info.key()).isEqualTo("lockstep:orders:2");
				assertThat(info.lockName()).isEqualTo("orders");
				assertThat(info.fencingToken()).isEqualTo(held.fencingToken());
				assertThat(info.reentrancyDepth()).isEqualTo(2);
				assertThat(info.holderThread()).isEqualTo(Thread.currentThread().getName());
				assertThat(info.leaseRemaining()).isPositive();
			});
		}
		this.locks.withLockName("Reports.build").execute("r", (lock) -> null);
		assertThat(timerCount("lockstep.acquire", "orders", "acquired")).isEqualTo(2);
		assertThat(timerCount("lockstep.acquire", "Reports.build", "acquired")).isEqualTo(1);
		assertThat(this.meters.find("lockstep.held").tag("lock", "orders").timer().count()).isEqualTo(2);
		assertThat(this.locks.heldLocks()).isEmpty();
	}

	@Test
	void timeoutsSkipsAndErrorsHaveTheirOutcome(RedisFixture fixture) {
		RedisNode other = fixture.standalone();
		RedisClient otherClient = TestLocks.client(other);
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(this.meters));
		try (RedisLockTemplate holder = TestLocks.builder(otherClient).build();
				RedisLockTemplate observed = TestLocks.builder(otherClient)
					.commandTimeout(Duration.ofMillis(200))
					.observationRegistry(registry, null)
					.build()) {
			try (LockHandle held = holder.acquire("busy")) {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> observed.withWaitTime(Duration.ofMillis(100)).acquire("busy"));
				// the caller skips instead of failing: not contention
				assertThat(observed.withWaitTime(Duration.ofMillis(100)).tryAcquire("busy")).isEmpty();
				assertThat(observed.tryExecute("busy", (lock) -> "ran")).isEmpty();
			}
			other.pause();
			try {
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> observed.acquire("busy"));
			}
			finally {
				other.resume();
			}
			assertThat(timerCount("lockstep.acquire", "default", "timeout")).isEqualTo(1);
			assertThat(timerCount("lockstep.acquire", "default", "skipped")).isEqualTo(2);
			assertThat(timerCount("lockstep.acquire", "default", "error")).isEqualTo(1);
		}
		finally {
			otherClient.shutdown();
		}
	}

	@Test
	void aLostLeaseIsAnEventOfTheHeldObservation() {
		LockHandle lock = this.locks.acquire("lost");
		this.redis.call("DEL", "lockstep:lost");
		await().atMost(Duration.ofSeconds(2)).until(() -> !this.events.isEmpty());
		assertThat(this.events).extracting(Observation.Event::getName).containsExactly("lease.lost");
		assertThatExceptionOfType(io.lockstep.LockLostException.class).isThrownBy(lock::close);
	}

	@Test
	void meterTagsNeverContainTheKeySoTheMeterCountStaysBounded() {
		for (int i = 0; i < 1_000; i++) {
			this.locks.named("orders").execute("order-" + i, (lock) -> null);
		}
		List<Meter> lockMeters = this.meters.getMeters()
			.stream()
			.filter((meter) -> meter.getId().getName().startsWith("lockstep"))
			.toList();
		List<String> tagValues = lockMeters.stream()
			.flatMap((meter) -> meter.getId().getTags().stream())
			.map(Tag::getValue)
			.distinct()
			.toList();
		System.out.printf("1000 distinct keys: %d lockstep meters, tag values %s%n", lockMeters.size(), tagValues);
		assertThat(lockMeters).hasSizeLessThanOrEqualTo(6);
		assertThat(tagValues).noneMatch((value) -> value.contains("order-"));
		assertThat(timerCount("lockstep.acquire", "orders", "acquired")).isEqualTo(1_000);
	}

	private long timerCount(String name, String lock, String outcome) {
		var timer = this.meters.find(name).tag("lock", lock).tag("outcome", outcome).timer();
		return (timer != null) ? timer.count() : 0;
	}

}
