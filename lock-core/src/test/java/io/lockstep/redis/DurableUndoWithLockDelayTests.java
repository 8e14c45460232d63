package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.LockException;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DurableUndoTests with a lock delay: an attempt granted while its connection dropped
 * leaves the key taken for its lease plus its lock delay (the key lives that long), and
 * the release scripts free a key in its lock delay at once. The undo is sent again only
 * until twice the lease has passed (Acquisition#undo), not until the lease plus the
 * delay: when Redis is unreachable longer than that, the key stays taken by a token
 * nobody holds for the whole delay, as if its holder had died.
 */
@RedisTest
class DurableUndoWithLockDelayTests {

	private static final Duration LEASE = Duration.ofMillis(1500);

	private static final Duration DELAY = Duration.ofSeconds(20);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	/** Longer than the undo is sent again (2 x lease = 3.5 s with a 2 s queue entry). */
	private static final long UNREACHABLE_MILLIS = 5000;

	@Test
	void anAttemptWithALockDelayGrantedWhileItsConnectionDroppedIsUndoneOnceRedisIsReachableAgain(RedisNode redis)
			throws Exception {
		undoneAfterAnOutageOf(redis, UNREACHABLE_MILLIS);
	}

	/** Control: an outage shorter than twice the lease; the undo lands. */
	@Test
	void controlAShortOutage(RedisNode redis) throws Exception {
		undoneAfterAnOutageOf(redis, 1200);
	}

	private void undoneAfterAnOutageOf(RedisNode redis, long unreachableMillis) throws Exception {
		RedisClient direct = TestLocks.client(redis);
		RedisClient behindProxy = null;
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				StatefulRedisConnection<String, String> probe = direct.connect()) {
			behindProxy = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
			try (RedisLockTemplate client = TestLocks.builder(behindProxy)
				.commandTimeout(COMMAND_TIMEOUT)
				.leaseTime(LEASE)
				.lockDelay(DELAY)
				.build()) {
				client.tryExecute("warm-up", (lock) -> null); // connected, scripts loaded
				long heldBefore = proxy.heldReplies();
				proxy.holdCommandReplies();
				CompletableFuture<Throwable> attempt = CompletableFuture.supplyAsync(() -> {
					try {
						client.tryAcquire("stock").ifPresent(io.lockstep.LockHandle::close);
						return null;
					}
					catch (LockException ex) {
						return ex;
					}
				});
				assertThat(
						TestLocks.eventually(Duration.ofSeconds(5), () -> probe.sync().exists("lockstep:stock") == 1))
					.isTrue();
				assertThat(proxy.heldReplies()).isGreaterThan(heldBefore);
				proxy.reset();
				Throwable failure = attempt.get(10, TimeUnit.SECONDS);
				assertThat(failure).isInstanceOf(LockException.class);
				Thread.sleep(unreachableMillis); // models how long Redis stays
													// unreachable
				proxy.pass();
				long reachable = System.nanoTime();
				// Lettuce reconnects on its own growing delay (seconds after a 5 s
				// outage);
				// without the undo the key would live its lease plus the 20 s delay
				boolean freed = TestLocks.eventually(Duration.ofSeconds(10),
						() -> probe.sync().exists("lockstep:stock") == 0);
				long afterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reachable);
				System.out.printf(
						"durable undo with a lock delay: the attempt failed (%s); %s %d ms after Redis was reachable "
								+ "again (outage %d ms, lease %d ms, delay %d s, value %s, PTTL now %d ms)%n",
						failure.getMessage(), freed ? "the key was freed" : "the key was still held", afterMillis,
						unreachableMillis, LEASE.toMillis(), DELAY.toSeconds(), probe.sync().get("lockstep:stock"),
						probe.sync().pttl("lockstep:stock"));
				assertThat(freed).as("the key is freed, not held by a dead token for its lock delay").isTrue();
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

}
