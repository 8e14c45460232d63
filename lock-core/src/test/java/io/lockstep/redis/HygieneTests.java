package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Nothing is left behind: no lock keys, no subscriptions, no renewal tasks, no threads.
 */
@RedisTest
class HygieneTests {

	@Test
	void releaseAndShutdownLeaveNoKeysSubscriptionsOrRenewalTasks(RedisNode redis) throws Exception {
		RedisClient client = TestLocks.client(redis);
		RedisLockTemplate locks = TestLocks.builder(client).build();
		RedisLockTemplate other = TestLocks.builder(client).waitTime(Duration.ofSeconds(5)).build();
		for (int i = 0; i < 20; i++) {
			String key = "clean:" + i;
			LockHandle held = locks.acquire(key);
			CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> other.execute(key, (lock) -> null));
			Eventually.holds(Duration.ofSeconds(2), () -> Probes.engine(other).keysWaitedFor() > 0);
			held.close();
			waiter.get(5, TimeUnit.SECONDS);
		}
		locks.acquireAll(List.of("clean:a", "clean:b")).close();
		locks.tryExecute("clean:c", (lock) -> null);

		assertThat(Probes.engine(locks).registered()).isZero();
		assertThat(Probes.engine(other).keysWaitedFor()).isZero();
		// one-key waiters hear hand-offs on their client's own channel, subscribed for
		// the client's life; a key's release channel (waiters of a lock on several keys)
		// stays subscribed for 5 s after its last waiter left, then it is unsubscribed
		List<?> channels = (List<?>) redis.call("PUBSUB", "CHANNELS", "lockstep:*");
		assertThat(channels).as("the waiters' client's own channel").hasSize(1);
		assertThat((String) channels.get(0)).startsWith("lockstep:__c:");
		CompletableFuture<Void> multiKeyWaiter;
		try (LockHandle held = locks.acquire("clean:a")) {
			multiKeyWaiter = CompletableFuture
				.runAsync(() -> other.executeAll(List.of("clean:a", "clean:b"), (lock) -> null));
			Eventually.holds(Duration.ofSeconds(2), () -> Probes.engine(other).keysWaitedFor() > 0);
			await("the release channel of the key a lock on two keys waits for").atMost(Duration.ofSeconds(2))
				.until(() -> ((List<?>) redis.call("PUBSUB", "CHANNELS", "lockstep:clean:*")).size() == 1);
		}
		multiKeyWaiter.get(5, TimeUnit.SECONDS);
		long waitersLeft = System.nanoTime();
		await("no release channel subscribed some seconds after the waiters left").atMost(Duration.ofSeconds(10))
			.until(() -> ((List<?>) redis.call("PUBSUB", "CHANNELS", "lockstep:clean:*")).isEmpty());
		System.out.printf("release channel unsubscribed %d ms after its last waiter left; own channel %s%n",
				(System.nanoTime() - waitersLeft) / 1_000_000, channels.get(0));
		locks.close();
		other.close();

		@SuppressWarnings("unchecked")
		List<Object> keys = (List<Object>) ((List<?>) redis.call("SCAN", "0", "MATCH", "lockstep:*", "COUNT", "10000"))
			.get(1);
		String pubSubClients = (String) redis.call("CLIENT", "LIST", "TYPE", "pubsub");
		boolean watchdogThreadAlive = Eventually.holds(Duration.ofSeconds(2),
				() -> Thread.getAllStackTraces()
					.keySet()
					.stream()
					.noneMatch((t) -> t.getName().equals("lockstep-watchdog")));
		System.out.printf(
				"after release and shutdown: keys %s, pub/sub clients %d, renewal tasks %d, watchdog thread "
						+ "gone %s%n",
				keys, pubSubClients.lines().count(), Probes.engine(locks).registered(), watchdogThreadAlive);
		assertThat(keys).as("only the fencing counter stays").containsExactly("lockstep:__fence");
		assertThat(pubSubClients).isBlank();
		assertThat(watchdogThreadAlive).isTrue();
		client.shutdown();
	}

}
