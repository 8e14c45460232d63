package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * A holder's renewals ride through Redis not answering within its lease; an acquisition
 * does not wait for a Redis that does not answer: only a lock held by another owner is
 * worth waiting for, so a waiter whose re-check fails ends with that failure, and a call
 * that cannot wait fails at once.
 */
@RedisTest
class RidingThroughFailuresTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	private static final Duration PAUSE = Duration.ofMillis(1_500);

	@Test
	void aWaiterFailsWhenRedisStopsAnsweringInsteadOfWaitingOutItsWaitTime(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient holderClient = TestLocks.client(redis);
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate holder = TestLocks.builder(holderClient)
			.commandTimeout(COMMAND_TIMEOUT)
			.leaseTime(Duration.ofSeconds(5))
			.build();
				RedisLockTemplate locks = TestLocks.builder(client)
					.commandTimeout(COMMAND_TIMEOUT)
					.leaseTime(Duration.ofSeconds(3))
					.waitTime(Duration.ofSeconds(10))
					.build()) {
			locks.tryAcquire("warm-up").ifPresent(LockHandle::close);
			LockHandle held = holder.acquire("ride");
			CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = locks.acquire("ride")) {
					return lock.fencingToken();
				}
			});
			await("the waiter waits").atMost(Duration.ofSeconds(5))
				.until(() -> Probes.engine(locks).keysWaitedFor() == 1);
			redis.pause();
			long pausedAt = System.nanoTime();
			Throwable failure;
			long failedMillis;
			try {
				long tryStart = System.nanoTime();
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("other"))
					.withMessageContaining("did not answer");
				long tryMillis = (System.nanoTime() - tryStart) / 1_000_000;
				assertThat(tryMillis).as("a call that cannot wait fails at once")
					.isLessThan(COMMAND_TIMEOUT.toMillis() + 700);
				// its next re-check (at most 500 ms away) times out: the waiter fails
				// then
				failure = catchThrowable(() -> waiter.get(2_500, TimeUnit.MILLISECONDS));
				failedMillis = (System.nanoTime() - pausedAt) / 1_000_000;
			}
			finally {
				redis.resume();
			}
			System.out.printf(
					"Redis paused while a waiter (wait 10 s) waited for a held lock: the waiter ended %d ms "
							+ "after the pause (re-check 500 ms, command timeout %d ms) with %s%n",
					failedMillis, COMMAND_TIMEOUT.toMillis(), failure);
			assertThat(failure).as("the waiter ended while Redis was paused")
				.isInstanceOf(ExecutionException.class)
				.cause()
				.isExactlyInstanceOf(LockException.class)
				.hasMessageContaining("Could not acquire lock 'lockstep:ride'")
				// Lockstep's own bound on the reply, or Lettuce's timeout of the same
				// length
				.hasMessageMatching("(?s).*(did not answer within|Command timed out after).*");
			assertThat(held.isHeld()).as("the holder rode through the pause").isTrue();
			held.close();
			try (LockHandle again = locks.acquire("ride")) {
				assertThat(again.fencingToken()).isGreaterThan(held.fencingToken());
			}
			assertThat(Probes.engine(locks).keysWaitedFor()).isZero();
		}
		finally {
			redis.resume();
			holderClient.shutdown();
			client.shutdown();
		}
	}

	@Test
	void aHolderKeepsItsLeaseThroughAPauseShorterThanTheLease(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(COMMAND_TIMEOUT)
			.leaseTime(Duration.ofSeconds(3))
			.build()) {
			LockHandle lock = locks.acquire("held");
			redis.pause();
			try {
				Eventually.holds(PAUSE, () -> false); // renewals time out meanwhile
				assertThat(lock.isHeld()).isTrue();
			}
			finally {
				redis.resume();
			}
			await().atMost(Duration.ofSeconds(2)).until(() -> !locks.renewalsFailing());
			lock.verifyHeld();
			lock.close();
			assertThat(locks.leasesLost()).isZero();
		}
		finally {
			redis.resume();
			client.shutdown();
		}
	}

}
