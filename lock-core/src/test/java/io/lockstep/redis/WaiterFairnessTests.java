package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every waiter of a key is served in its turn while other clients keep taking the key,
 * whatever else waits for the key in its own process.
 */
@RedisTest
class WaiterFairnessTests {

	private final List<RedisClient> clients = new ArrayList<>();

	@AfterEach
	void shutdown() {
		this.clients.forEach(RedisClient::shutdown);
	}

	/**
	 * Clients B1 and B2 keep handing the key to each other (each holds it 20 ms). In
	 * client A, a multi-key waiter waits for the key first, then a one-key waiter: the
	 * one-key waiter must get the key within its 3 s wait, as it would with no multi-key
	 * waiter in front of it locally.
	 */
	@Test
	void aOneKeyWaiterBehindALocalMultiKeyWaiterOfTheSameKeyIsServedWhileAnotherClientContends(RedisFixture fixture)
			throws Exception {
		RedisNode redis = fixture.standalone();
		String key = "shared";
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger taken = new AtomicInteger();
		List<String> contenderFailures = new java.util.concurrent.CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> contenders = new ArrayList<>();
		try (RedisLockTemplate a = TestLocks.builder(client(redis)).build();
				RedisLockTemplate b1 = TestLocks.builder(client(redis)).waitTime(Duration.ofSeconds(10)).build();
				RedisLockTemplate b2 = TestLocks.builder(client(redis)).waitTime(Duration.ofSeconds(10)).build()) {
			TestLocks.warmUp(a, b1, b2);
			for (RedisLockTemplate b : List.of(b1, b2)) {
				contenders.add(CompletableFuture.runAsync(() -> {
					while (!stop.get()) {
						try (LockHandle lock = b.acquire(key)) {
							taken.incrementAndGet();
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the
																						// work
						}
					}
				}));
			}
			await("B contends").atMost(Duration.ofSeconds(5)).until(() -> taken.get() >= 20);
			AtomicReference<Object> multi = new AtomicReference<>();
			Thread multiKey = new Thread(() -> {
				try (LockHandle all = a.withWaitTime(Duration.ofSeconds(10)).acquireAll(List.of(key, "other"))) {
					multi.set("acquired");
				}
				catch (RuntimeException ex) {
					multi.set(ex);
				}
			}, "multi-key-waiter");
			multiKey.start();
			assertThat(TestLocks.parkedFor(multiKey, Duration.ofMillis(100), Duration.ofSeconds(5)))
				.as("the multi-key waiter waits")
				.isTrue();
			int takenBefore = taken.get();
			long delsBefore = TestLocks.commandCalls(redis, "del");
			long start = System.nanoTime();
			CompletableFuture<Long> oneKey = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = a.withWaitTime(Duration.ofSeconds(3)).acquire(key)) {
					return System.nanoTime();
				}
			});
			String outcome;
			long millis;
			try {
				millis = (oneKey.get(10, TimeUnit.SECONDS) - start) / 1_000_000;
				outcome = "acquired after " + millis + " ms";
			}
			catch (ExecutionException ex) {
				millis = (System.nanoTime() - start) / 1_000_000;
				outcome = "failed after " + millis + " ms: " + ex.getCause();
			}
			int byOthers = taken.get() - takenBefore;
			long freed = TestLocks.commandCalls(redis, "del") - delsBefore;
			stop.set(true);
			CompletableFuture.allOf(contenders.toArray(CompletableFuture[]::new)).get(15, TimeUnit.SECONDS);
			multiKey.join(15_000);
			System.out.printf("one-key waiter behind a local multi-key waiter of '%s': %s; clients B took the key %d "
					+ "times meanwhile (%d releases freed it instead of handing it off); the multi-key waiter: %s; "
					+ "contenders' failures: %s%n", key, outcome, byOthers, freed, multi.get(), contenderFailures);
			assertThat(outcome)
				.as("the one-key waiter (wait time 3 s), while clients B took the key %d times", byOthers)
				.startsWith("acquired");
		}
		finally {
			stop.set(true);
		}
	}

	private RedisClient client(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		this.clients.add(client);
		return client;
	}

}
