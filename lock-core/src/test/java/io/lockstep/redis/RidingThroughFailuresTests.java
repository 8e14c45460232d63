package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * While its wait lasts, a waiter treats Redis not answering as "not yet"; a holder's
 * renewal likewise within its lease. A call that cannot wait fails at once.
 */
@RedisTest
class RidingThroughFailuresTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	private static final Duration PAUSE = Duration.ofMillis(1_500);

	@Test
	void aWaiterRidesThroughRedisPausedForLongerThanTheCommandTimeout(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(COMMAND_TIMEOUT)
			.leaseTime(Duration.ofSeconds(3))
			.waitTime(Duration.ofSeconds(10))
			.build()) {
			locks.tryAcquire("warm-up").ifPresent(LockHandle::close);
			CountDownLatch started = new CountDownLatch(1);
			redis.pause();
			long pausedAt = System.nanoTime();
			CompletableFuture<Long> acquired;
			try {
				acquired = CompletableFuture.supplyAsync(() -> {
					started.countDown();
					try (LockHandle lock = locks.acquire("ride")) {
						return lock.fencingToken();
					}
				});
				assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
				long tryStart = System.nanoTime();
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("other"))
					.withMessageContaining("did not answer");
				long tryMillis = (System.nanoTime() - tryStart) / 1_000_000;
				assertThat(tryMillis).as("a call that cannot wait fails at once")
					.isLessThan(COMMAND_TIMEOUT.toMillis() + 700);
				TestLocks.eventually(PAUSE, () -> false); // let the pause outlast several
															// attempts
			}
			finally {
				redis.resume();
			}
			long fencingToken = acquired.get(10, TimeUnit.SECONDS);
			long tookMillis = (System.nanoTime() - pausedAt) / 1_000_000;
			System.out.printf(
					"Redis paused %d ms (command timeout %d ms): the waiter acquired after %d ms "
							+ "(fencing token %d), tryAcquire failed at once%n",
					PAUSE.toMillis(), COMMAND_TIMEOUT.toMillis(), tookMillis, fencingToken);
			assertThat(fencingToken).isPositive();
		}
		finally {
			redis.resume();
			client.shutdown();
		}
	}

	@Test
	void aWaiterWhoseWaitEndsWhileRedisIsDownFailsWithTheLastCause(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(COMMAND_TIMEOUT)
			.waitTime(Duration.ofMillis(1_000))
			.build()) {
			locks.tryAcquire("warm-up").ifPresent(LockHandle::close);
			redis.pause();
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.acquire("down"))
				.withMessageContaining("within its wait time")
				// the last cause is a timeout: Lockstep's own wait for the reply, or
				// Lettuce's command timeout of the same length when its timer fires first
				// (a loaded machine)
				.withMessageMatching("(?s).*(did not answer within|Command timed out after).*")
				.withCauseInstanceOf(LockException.class);
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("wait 1000 ms with Redis paused: failed after %d ms%n", millis);
			assertThat(millis).isBetween(900L, 1_000L + COMMAND_TIMEOUT.toMillis() + 700);
		}
		finally {
			redis.resume();
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
				TestLocks.eventually(PAUSE, () -> false); // renewals time out meanwhile
				assertThat(lock.isHeld()).isTrue();
			}
			finally {
				redis.resume();
			}
			assertThat(TestLocks.eventually(Duration.ofSeconds(2), () -> !locks.renewalsFailing())).isTrue();
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
