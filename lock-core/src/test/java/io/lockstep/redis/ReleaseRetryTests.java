package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

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
				await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(waiter).keysWaitedFor() == 1);
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

	private static final Duration SHORT_COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void aReleaseThatFailsAfterTheWorkCompletedDoesNotFailTheCall(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		AtomicBoolean paused = new AtomicBoolean();
		AtomicReference<String> result = new AtomicReference<>();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(Duration.ofSeconds(5))
			.commandTimeout(SHORT_COMMAND_TIMEOUT)
			.build()) {
			long start = System.nanoTime();
			Throwable failure;
			try {
				failure = catchThrowable(() -> result.set(locks.execute("release:fails", (lock) -> {
					redis.pause();
					paused.set(true);
					return "done";
				})));
			}
			finally {
				if (paused.get()) {
					redis.resume();
				}
			}
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf(
					"Redis stopped as the work returned: execute() ended after %d ms with %s; %d leases lost%n", millis,
					(failure != null) ? failure : "result '" + result.get() + "'", locks.leasesLost());
			assertThat(paused.get()).isTrue();
			assertThat(failure).as("execute() whose release failed after the work completed").isNull();
			assertThat(result.get()).isEqualTo("done");
		}
		finally {
			client.shutdown();
		}
	}

}
