package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive acquisition makes its lease (the {@code lockstep.held} observation starts
 * there), ends its acquire observation and runs the caller's work on the engine's workers
 * (the work: there or on the subscribing thread), never on the storage client's I/O
 * threads: whether the reply to its first attempt grants it (the reply completes on an
 * I/O thread) or a release hands the lock to it (the hand-off message arrives on the
 * pub/sub connection's thread).
 */
@RedisTest
class ReactiveLeaseThreadTests {

	private static final String KEY = "threads";

	@Test
	void leasesHandlesAndWorkAreMadeOnTheEnginesWorkers(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient holderClient = TestLocks.client(redis);
		RedisClient subscriberClient = TestLocks.client(redis);
		List<String> heldStarts = new CopyOnWriteArrayList<>();
		List<String> acquireStops = new CopyOnWriteArrayList<>();
		List<String> work = new CopyOnWriteArrayList<>();
		ObservationRegistry observations = ObservationRegistry.create();
		observations.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStart(Observation.Context context) {
				if ("lockstep.held".equals(context.getName())) {
					heldStarts.add(Thread.currentThread().getName());
				}
			}

			@Override
			public void onStop(Observation.Context context) {
				if ("lockstep.acquire".equals(context.getName())) {
					acquireStops.add(Thread.currentThread().getName());
				}
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		int rounds = 20;
		try (RedisLockTemplate holder = TestLocks.builder(holderClient).waitTime(Duration.ofSeconds(5)).build();
				RedisLockTemplate subscriber = TestLocks.builder(subscriberClient)
					.waitTime(Duration.ofSeconds(10))
					.observationRegistry(observations, null)
					.build()) {
			TestLocks.warmUp(holder, subscriber);
			heldStarts.clear();
			acquireStops.clear();
			ReactiveLockTemplate reactive = ReactiveLocks.of(subscriber);
			for (int i = 0; i < rounds; i++) {
				// uncontended: granted by the first attempt's reply
				String uncontended = reactive
					.execute(KEY, (lock) -> Mono.fromCallable(ReactiveLeaseThreadTests::thread))
					.block(Duration.ofSeconds(5));
				work.add(uncontended);
				// contended: handed to the queued subscription by the holder's release
				LockHandle held = holder.acquire(KEY);
				CompletableFuture<String> handedOff = reactive
					.execute(KEY, (lock) -> Mono.fromCallable(ReactiveLeaseThreadTests::thread))
					.toFuture();
				int round = i;
				assertThat(TestLocks.eventually(Duration.ofSeconds(5), () -> queueLength(redis) == 1))
					.as("subscription %d queued", round)
					.isTrue();
				held.close();
				work.add(handedOff.get(5, TimeUnit.SECONDS));
			}
		}
		finally {
			holderClient.shutdown();
			subscriberClient.shutdown();
		}
		System.out.printf(
				"%d reactive acquisitions: held observations started on %s; acquire observations stopped "
						+ "on %s; work ran on %s%n",
				2 * rounds, distinct(heldStarts), distinct(acquireStops), distinct(work));
		// the work runs where the future's completion reaches it: a worker, or the
		// subscribing thread when the future completed before it subscribed
		assertThat(work).as("work runs")
			.hasSize(2 * rounds)
			.allMatch((name) -> name.startsWith("lockstep-async-") || name.equals("main"));
		assertThat(heldStarts).as("leases made")
			.hasSize(2 * rounds)
			.allMatch((name) -> name.startsWith("lockstep-async-"));
		assertThat(acquireStops).as("acquisitions ended")
			.hasSize(2 * rounds)
			.allMatch((name) -> name.startsWith("lockstep-async-"));
	}

	private static String thread() {
		return Thread.currentThread().getName();
	}

	private static List<String> distinct(List<String> names) {
		return names.stream().map((name) -> name.replaceAll("\\d+$", "N")).distinct().toList();
	}

	private static long queueLength(RedisNode redis) {
		return (Long) redis.call("LLEN", "lockstep:__q:" + KEY);
	}

}
