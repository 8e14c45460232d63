package io.lockstep.redis;

import java.time.Duration;
import java.util.Optional;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The max-hold time caps a hold from its start: the first lease as well as every renewal,
 * and the handle knows it lost the lock by the time the key expires.
 */
@RedisTest
class MaxHoldTimeTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void theFirstLeaseIsCappedByMaxHoldTime(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(Duration.ofSeconds(3))
			.maxHoldTime(Duration.ofMillis(800))
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			LockHandle lock = locks.acquire("capped:first");
			long pttl = (Long) redis.call("PTTL", "lockstep:capped:first");
			System.out.printf("lease 3000 ms, max-hold-time 800 ms: PTTL right after acquire %d ms%n", pttl);
			TestLocks.closeQuietly(lock);
			assertThat(pttl).as("PTTL of the key right after acquire (max-hold-time 800 ms)")
				.isPositive()
				.isLessThanOrEqualTo(800);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void isHeldTurnsFalseByTheTimeMaxHoldTimeExpiresTheKey(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		Duration lease = Duration.ofMillis(1_200);
		Duration maxHold = Duration.ofMillis(700);
		// a renewal falls due at 400 ms, before max-hold-time, and grants what is left
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(lease)
			.maxHoldTime(maxHold)
			.commandTimeout(COMMAND_TIMEOUT)
			.build(); RedisLockTemplate other = TestLocks.builder(client).commandTimeout(COMMAND_TIMEOUT).build()) {
			long start = System.nanoTime();
			LockHandle lock = locks.acquire("capped:held");
			await("the key expires at max-hold-time").atMost(maxHold.plus(lease).plusSeconds(1))
				.until(() -> !TestLocks.exists(redis, "lockstep:capped:held"));
			long goneMillis = (System.nanoTime() - start) / 1_000_000;
			boolean turnedFalse = Eventually.holds(Duration.ofMillis(50), () -> !lock.isHeld());
			long heldUntilMillis = goneMillis;
			if (!turnedFalse) {
				Eventually.holds(lease, () -> !lock.isHeld());
				heldUntilMillis = (System.nanoTime() - start) / 1_000_000;
			}
			System.out.printf("max-hold-time %d ms, lease %d ms: key gone after %d ms, isHeld() %s%n",
					maxHold.toMillis(), lease.toMillis(), goneMillis,
					turnedFalse ? "false within 50 ms" : "still true until " + heldUntilMillis + " ms");
			assertThat(turnedFalse)
				.as("isHeld() false within 50 ms of the key expiring after %d ms (true until %d ms)", goneMillis,
						heldUntilMillis)
				.isTrue();
			Optional<LockHandle> next = other.tryAcquire("capped:held");
			assertThat(next).as("another owner takes the expired key").isPresent();
			assertThat(lock.isHeld()).as("isHeld() once another owner holds the key").isFalse();
			next.get().close();
			TestLocks.closeQuietly(lock);
		}
		finally {
			client.shutdown();
		}
	}

}
