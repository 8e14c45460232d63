package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A release that fails after the guarded work (Redis unreachable for a moment, as during
 * a failover) is tried again in the background: the key is freed once Redis answers
 * again, not left taken for the rest of its lease.
 */
@RedisTest
class ReleaseRetryTests {

	private static final Duration LEASE = Duration.ofSeconds(15);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(250);

	@Test
	void aReleaseThatFailedIsRetriedAndTheNextWaiterGetsTheLockLongBeforeTheLeaseEnds(RedisNode redis)
			throws Exception {
		RedisClient behindProxy = null;
		RedisClient direct = TestLocks.client(redis);
		try (ChaosProxy proxy = ChaosProxy.to(redis)) {
			behindProxy = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
			try (RedisLockTemplate holder = TestLocks.builder(behindProxy)
				.commandTimeout(COMMAND_TIMEOUT)
				.leaseTime(LEASE)
				.build(); RedisLockTemplate waiter = TestLocks.builder(direct).waitTime(LEASE.plusSeconds(5)).build()) {
				LockHandle held = holder.acquire("job");
				CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
					try (LockHandle lock = waiter.acquire("job")) {
						return System.nanoTime();
					}
				});
				assertThat(
						TestLocks.eventually(Duration.ofSeconds(5), () -> Probes.engine(waiter).keysWaitedFor() == 1))
					.isTrue();
				// the release cannot reach Redis: it times out, and the caller is not
				// failed for it
				proxy.blackhole();
				held.close();
				assertThat(holder.releaseFailures()).isEqualTo(1);
				// the connection is cut (its timed-out command never reached Redis), then
				// Redis answers again
				proxy.reset();
				long answering = System.nanoTime();
				proxy.pass();
				long acquired = next.get(LEASE.plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
				long afterMillis = TimeUnit.NANOSECONDS.toMillis(acquired - answering);
				System.out.printf(
						"release retry: the release failed (Redis unreachable, command timeout %d ms); %d ms after "
								+ "Redis answered again the waiter held the lock (lease %d s)%n",
						COMMAND_TIMEOUT.toMillis(), afterMillis, LEASE.toSeconds());
				// without the retry the key stays taken until its lease runs out (~15 s)
				assertThat(afterMillis).isLessThan(5_000);
			}
		}
		finally {
			direct.shutdown();
			if (behindProxy != null) {
				behindProxy.shutdown();
			}
		}
	}

}
