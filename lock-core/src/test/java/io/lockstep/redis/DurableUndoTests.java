package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.LockException;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What an attempt may have taken is given back even when the connection drops at that
 * moment: an undo is as durable as a release. Redis runs the attempt's {@code SET}, the
 * connection is reset before the reply and new connections are refused for a while; the
 * call fails fast, and once Redis can be reached again the key is freed, not left taken
 * by a token nobody holds for the rest of its lease.
 *
 * <p>
 * With a lock delay, an attempt granted while its connection dropped would leave the key
 * taken for its lease plus its lock delay (the key lives that long); an undo frees a key
 * in its lock delay at once, and it is sent again until what it gives back has expired
 * (the lease, the queue entry and the lock delay), so an outage longer than the lease
 * does not leave the key taken for the delay either. Each case has a key of its own: a
 * case that fails leaves nothing behind for the next.
 */
@RedisTest
class DurableUndoTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	/**
	 * One outage.
	 *
	 * @param lease the lease of the attempt
	 * @param lockDelay the lock delay of the key, or zero
	 * @param unreachableMillis how long Redis stays unreachable: 1200 ms is longer than
	 * the command timeout (what was not written by then is given up); 5000 ms is longer
	 * than the undo is sent again with a lease of 1.5 s (2 x lease = 3.5 s with a 2 s
	 * queue entry)
	 * @param patience how long the key may take to be freed once Redis is reachable:
	 * Lettuce reconnects on its own growing delay (seconds after a 5 s outage); without
	 * the undo the key would live its lease (plus its lock delay)
	 */
	record Outage(String name, Duration lease, Duration lockDelay, long unreachableMillis, Duration patience) {

		/** The lock of this case, of its own. */
		String key() {
			return "stock-" + Integer.toHexString(this.name.hashCode());
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	static Stream<Outage> outages() {
		return Stream.of(
				new Outage("without a lock delay", Duration.ofSeconds(20), Duration.ZERO, 1200, Duration.ofSeconds(5)),
				new Outage("with a lock delay, an outage longer than the undo is sent again", Duration.ofMillis(1500),
						Duration.ofSeconds(20), 5000, Duration.ofSeconds(10)),
				new Outage("with a lock delay, a short outage", Duration.ofMillis(1500), Duration.ofSeconds(20), 1200,
						Duration.ofSeconds(10)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("outages")
	void anAttemptGrantedWhileItsConnectionDroppedIsUndoneOnceRedisIsReachableAgain(Outage outage, RedisNode redis)
			throws Exception {
		RedisClient direct = TestLocks.client(redis);
		RedisClient behindProxy = null;
		String key = "lockstep:" + outage.key();
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				StatefulRedisConnection<String, String> probe = direct.connect()) {
			behindProxy = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
			try (RedisLockTemplate client = TestLocks.builder(behindProxy)
				.commandTimeout(COMMAND_TIMEOUT)
				.leaseTime(outage.lease())
				.lockDelay(outage.lockDelay())
				.build()) {
				client.tryExecute("warm-up", (lock) -> null); // connected, scripts loaded
				long heldBefore = proxy.heldReplies();
				proxy.holdCommandReplies();
				CompletableFuture<Throwable> attempt = CompletableFuture.supplyAsync(() -> {
					try {
						client.tryAcquire(outage.key()).ifPresent(io.lockstep.LockHandle::close);
						return null;
					}
					catch (LockException ex) {
						return ex;
					}
				});
				// the SET ran in Redis; its reply waits in the proxy (which may read it
				// a moment after the probe sees the key)
				await().atMost(Duration.ofSeconds(5)).until(() -> probe.sync().exists(key) == 1);
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(proxy.heldReplies()).isGreaterThan(heldBefore));
				// the connection drops before the reply; reconnects are refused
				proxy.reset();
				Throwable failure = attempt.get(10, TimeUnit.SECONDS);
				assertThat(failure).as("the call fails fast with a LockException").isInstanceOf(LockException.class);
				// models how long Redis stays unreachable (the outage, not
				// synchronisation)
				Thread.sleep(outage.unreachableMillis());
				proxy.pass();
				long reachable = System.nanoTime();
				boolean freed = freed(probe, key, outage.patience());
				long afterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reachable);
				System.out.printf(
						"durable undo %s: the attempt failed (%s); %s %d ms after Redis was reachable again "
								+ "(outage %d ms, lease %d ms, value %s, PTTL now %d ms)%n",
						outage, failure.getMessage(), freed ? "the key was freed" : "the key was still held",
						afterMillis, outage.unreachableMillis(), outage.lease().toMillis(), probe.sync().get(key),
						probe.sync().pttl(key));
				assertThat(freed).as("the key is freed, not held by a dead token for its lease or lock delay").isTrue();
			}
		}
		catch (ExecutionException ex) {
			throw new AssertionError(ex.getCause());
		}
		finally {
			direct.shutdown();
			if (behindProxy != null) {
				behindProxy.shutdown();
			}
		}
	}

	private static boolean freed(StatefulRedisConnection<String, String> probe, String key, Duration patience) {
		try {
			await().atMost(patience).until(() -> probe.sync().exists(key) == 0);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

}
