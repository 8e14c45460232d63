package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The template on Redlock: waiters woken by the release notification (not by polling),
 * locks of several keys, and what closing leaves: no keys, no subscriptions, no
 * connections of its own, and the clients it was given still open.
 */
@RedisTest
class RedlockTemplateTests {

	@Test
	void aWaiterIsWokenByTheReleaseNotification(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate holder = RedlockNodes.on(nodes).builder().build();
				RedisLockTemplate waiter = RedlockNodes.on(nodes).builder().waitTime(Duration.ofSeconds(20)).build()) {
			long[] handOffs = new long[5];
			for (int i = 0; i < handOffs.length; i++) {
				LockHandle held = holder.acquire("hand-off"); // a 30 s lease: no expiry
																// to wait for
				CompletableFuture<Long> acquiredAt = CompletableFuture
					.supplyAsync(() -> waiter.execute("hand-off", (lock) -> System.nanoTime()));
				await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(waiter).keysWaitedFor() == 1);
				long released = System.nanoTime();
				held.close();
				handOffs[i] = (acquiredAt.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			}
			Arrays.sort(handOffs);
			System.out.printf("Redlock hand-off after release (5 masters), sorted: %s ms (a waiter not notified "
					+ "re-checks after 500 ms)%n", Arrays.toString(handOffs));
			assertThat(handOffs[handOffs.length / 2]).as("median hand-off in ms").isLessThan(250);
		}
	}

	@Test
	void readLocksAndSemaphoresAreRefusedNamingTheCallWhileTheWriteLockWorks(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		try (RedisLockTemplate locks = RedlockNodes.on(nodes).builder().build()) {
			assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(locks::read)
				.withMessage("read(): the read lock is not supported by this lock store (Redlock supports "
						+ "exclusive locks only)");
			assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> locks.withPermits(3))
				.withMessageStartingWith("withPermits(3): a semaphore of 3 permits is not supported");
			assertThat(locks.write().withPermits(1).execute("doc:1", LockHandle::key)).isEqualTo("lockstep:doc:1");
		}
	}

	@Test
	void locksSeveralKeysAllOrNothing(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		try (RedisLockTemplate first = RedlockNodes.on(nodes).builder().build();
				RedisLockTemplate second = RedlockNodes.on(nodes).builder().waitTime(Duration.ZERO).build()) {
			try (LockHandle both = first.acquireAll(List.of("sku:1", "sku:2"))) {
				// granted once a quorum holds both keys (a slow node's vote may come
				// later, or lose to another owner's attempt there)
				assertThat(nodes.stream().filter(RedlockTemplateTests::holdsBothKeys).count())
					.as("nodes holding both keys")
					.isGreaterThanOrEqualTo(2);
				assertThat(second.tryAcquire("sku:2")).isEmpty();
				assertThat(second.isLocked("sku:1")).isTrue();
			}
			assertThat(second.tryExecute("sku:2", LockHandle::key)).contains("lockstep:sku:2");
			assertThat(second.isLocked("sku:1")).isFalse();
		}
	}

	private static boolean holdsBothKeys(RedisNode node) {
		return RedlockNodes.has(node, "lockstep:sku:1") && RedlockNodes.has(node, "lockstep:sku:2");
	}

	@Test
	void closingShutsDownItsOwnClientsButNeverTheOnesItWasGiven(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		// the given clients' threads are named "given-...", the template's own
		// "lettuce-..."
		AtomicInteger threadCount = new AtomicInteger();
		ClientResources resources = DefaultClientResources.builder().threadFactoryProvider((pool) -> (task) -> {
			Thread thread = new Thread(task, "given-" + pool + "-" + threadCount.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		}).build();
		List<RedisClient> given = new ArrayList<>();
		for (RedisNode node : nodes) {
			given.add(RedisClient.create(resources, RedisURI.create(node.host(), node.port())));
		}
		try {
			Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
			long before = clients(nodes.get(0));
			RedisLockTemplate owned = RedlockNodes.on(nodes).builder().waitTime(Duration.ofSeconds(5)).build();
			RedisLockTemplate onGiven = Redlock.clients(given).builder().waitTime(Duration.ofSeconds(5)).build();
			LockHandle held = owned.acquire("clean");
			CompletableFuture<Void> waiting = CompletableFuture
				.runAsync(() -> onGiven.execute("clean", (lock) -> null));
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(onGiven).keysWaitedFor() == 1);
			held.close();
			waiting.join();
			onGiven.close();
			owned.close();
			await("connections left open").atMost(Duration.ofSeconds(5)).until(() -> clients(nodes.get(0)) == before);
			for (RedisNode node : nodes) {
				assertThat(node.call("KEYS", "lockstep:*")).isEqualTo(List.of("lockstep:__fence"));
				assertThat((String) node.call("CLIENT", "LIST", "TYPE", "pubsub")).isBlank();
			}
			await("Redlock or Lettuce threads left running").atMost(Duration.ofSeconds(5))
				.until(() -> Thread.getAllStackTraces()
					.keySet()
					.stream()
					.noneMatch((thread) -> !threadsBefore.contains(thread) && thread.isAlive()
							&& (thread.getName().startsWith("lettuce-")
									|| thread.getName().equals("lockstep-redlock-connect"))));
			// the given clients still work (bounded: a client shut down may never
			// connect)
			for (RedisClient client : given) {
				CompletableFuture<String> ping = CompletableFuture.supplyAsync(() -> {
					try (var connection = client.connect()) {
						return connection.sync().ping();
					}
				});
				assertThat(ping).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("PONG");
			}
		}
		finally {
			given.forEach(RedisClient::shutdown);
			resources.shutdown();
		}
	}

	private static long clients(RedisNode node) {
		return ((String) node.call("CLIENT", "LIST")).lines().count();
	}

}
