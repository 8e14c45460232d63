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
 * What an attempt may have taken is given back even when the connection drops at that
 * moment: an undo is as durable as a release. Redis runs the attempt's {@code SET}, the
 * connection is reset before the reply and new connections are refused for a while; the
 * call fails fast, and once Redis can be reached again the key is freed, not left taken
 * by a token nobody holds for the rest of its lease.
 */
@RedisTest
class DurableUndoTests {

	private static final Duration LEASE = Duration.ofSeconds(20);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	/** Longer than the command timeout: what was not written by then is given up. */
	private static final long UNREACHABLE_MILLIS = 1200;

	@Test
	void anAttemptGrantedWhileItsConnectionDroppedIsUndoneOnceRedisIsReachableAgain(RedisNode redis) throws Exception {
		RedisClient direct = TestLocks.client(redis);
		RedisClient behindProxy = null;
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				StatefulRedisConnection<String, String> probe = direct.connect()) {
			behindProxy = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
			try (RedisLockTemplate client = TestLocks.builder(behindProxy)
				.commandTimeout(COMMAND_TIMEOUT)
				.leaseTime(LEASE)
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
				// the SET ran in Redis; its reply waits in the proxy
				assertThat(
						TestLocks.eventually(Duration.ofSeconds(5), () -> probe.sync().exists("lockstep:stock") == 1))
					.isTrue();
				assertThat(proxy.heldReplies()).isGreaterThan(heldBefore);
				proxy.reset(); // the connection drops before the reply; reconnects are
								// refused
				Throwable failure = attempt.get(10, TimeUnit.SECONDS);
				assertThat(failure).as("the call fails fast with a LockException").isInstanceOf(LockException.class);
				Thread.sleep(UNREACHABLE_MILLIS); // models how long Redis stays
													// unreachable
				proxy.pass();
				long reachable = System.nanoTime();
				boolean freed = TestLocks.eventually(Duration.ofSeconds(5),
						() -> probe.sync().exists("lockstep:stock") == 0);
				long afterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - reachable);
				System.out.printf(
						"durable undo: the attempt failed (%s); %s %d ms after Redis was reachable again "
								+ "(lease %d s, PTTL now %d ms)%n",
						failure.getMessage(), freed ? "the key was freed" : "the key was still held", afterMillis,
						LEASE.toSeconds(), probe.sync().pttl("lockstep:stock"));
				assertThat(freed).as("the key is freed, not held by a dead token for the lease").isTrue();
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
