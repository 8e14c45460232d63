package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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
			TestLocks.eventually(Duration.ofSeconds(2), () -> other.engine().keysWaitedFor() > 0);
			held.close();
			waiter.get(5, TimeUnit.SECONDS);
		}
		locks.acquireAll(List.of("clean:a", "clean:b")).close();
		locks.tryExecute("clean:c", (lock) -> null);

		assertThat(locks.engine().registered()).isZero();
		assertThat(other.engine().keysWaitedFor()).isZero();
		// a key's channel stays subscribed for 5 s after its last waiter left (waiters
		// that come back soon cost no SUBSCRIBE), then it is unsubscribed
		int lingering = ((List<?>) redis.call("PUBSUB", "CHANNELS", "lockstep:*")).size();
		long waitersLeft = System.nanoTime();
		assertThat(TestLocks.eventually(Duration.ofSeconds(10),
				() -> ((List<?>) redis.call("PUBSUB", "CHANNELS", "lockstep:*")).isEmpty()))
			.as("no channel subscribed some seconds after the waiters left")
			.isTrue();
		System.out.printf("channels subscribed when the waiters left: %d; all unsubscribed %d ms later%n", lingering,
				(System.nanoTime() - waitersLeft) / 1_000_000);
		assertThat(lingering).isBetween(0, 20);
		locks.close();
		other.close();

		@SuppressWarnings("unchecked")
		List<Object> keys = (List<Object>) ((List<?>) redis.call("SCAN", "0", "MATCH", "lockstep:*", "COUNT", "10000"))
			.get(1);
		String pubSubClients = (String) redis.call("CLIENT", "LIST", "TYPE", "pubsub");
		boolean watchdogThreadAlive = TestLocks.eventually(Duration.ofSeconds(2),
				() -> Thread.getAllStackTraces()
					.keySet()
					.stream()
					.noneMatch((t) -> t.getName().equals("lockstep-watchdog")));
		System.out.printf(
				"after release and shutdown: keys %s, pub/sub clients %d, renewal tasks %d, watchdog thread "
						+ "gone %s%n",
				keys, pubSubClients.lines().count(), locks.engine().registered(), watchdogThreadAlive);
		assertThat(keys).as("only the fencing counter stays").containsExactly("lockstep:__fence");
		assertThat(pubSubClients).isBlank();
		assertThat(watchdogThreadAlive).isTrue();
		client.shutdown();
	}

}
