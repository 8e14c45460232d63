package io.lockstep.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link LockHandle#extend(Duration)} on a single master beyond the contract (see
 * {@code LockContract}): the watchdog's renewals never end an extension early, the
 * max-hold cap bounds it, bad input and an unreachable Redis fail clearly.
 */
@RedisTest
class LeaseExtensionTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private final RedisNode redis;

	private RedisClient client;

	LeaseExtensionTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
	}

	@AfterEach
	void disconnect() {
		this.client.shutdown();
	}

	@Test
	void watchdogRenewalsNeverEndAnExtensionEarly() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(200))
			.build()) {
			TestLocks.warmUp(locks);
			try (LockHandle lock = locks.acquire("job:extended")) {
				assertThat(lock.extend(Duration.ofSeconds(10))).isTrue();
				// five renewal periods of the 600 ms watchdog lease
				Eventually.holds(LEASE.multipliedBy(5).dividedBy(3), () -> false);
				long left = (Long) this.redis.call("PTTL", "lockstep:job:extended");
				System.out.printf("extend(10s) on a 600 ms watchdog lease: %d ms left after 1 s of renewals%n", left);
				assertThat(left).as("the stored lease after the watchdog's renewals").isGreaterThan(7_000L);
				assertThat(lock.isHeld()).isTrue();
			}
			assertThat(this.redis.call("PTTL", "lockstep:job:extended")).as("released at close").isEqualTo(-2L);
		}
	}

	@Test
	void extendNeverPassesTheMaxHoldCapAndAnswersWhetherStillHeld() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(200))
			.maxHoldTime(Duration.ofMillis(1500))
			.build()) {
			TestLocks.warmUp(locks);
			LockHandle renewed = locks.acquire("job:capped");
			LockHandle fixed = locks.withLeaseTime(Duration.ofMillis(500)).acquire("job:capped-fixed");
			assertThat(renewed.extend(Duration.ofDays(1))).as("an extension cut at the cap is still held").isTrue();
			assertThat(fixed.extend(Duration.ofHours(1))).isTrue();
			long renewedLeft = (Long) this.redis.call("PTTL", "lockstep:job:capped");
			long fixedLeft = (Long) this.redis.call("PTTL", "lockstep:job:capped-fixed");
			System.out.printf("extend past max-hold-time 1500ms: %d ms and %d ms left in Redis%n", renewedLeft,
					fixedLeft);
			assertThat(renewedLeft).isBetween(1L, 1500L);
			assertThat(fixedLeft).isBetween(1L, 1500L);
			await("not held once the cap passed").atMost(Duration.ofSeconds(5))
				.until(() -> !renewed.isHeld() && !fixed.isHeld());
			assertThat(renewed.extend(Duration.ofSeconds(5))).as("extend after the cap").isFalse();
			assertThat(fixed.extend(Duration.ofSeconds(5))).isFalse();
			// the local deadline is conservative: the key goes a few ms later
			await("the key gone by the cap").atMost(Duration.ofSeconds(2))
				.until(() -> Long.valueOf(-2).equals(this.redis.call("PTTL", "lockstep:job:capped")));
		}
	}

	@Test
	void extendOfAMultiKeyHandleOrAReentryExtendsEveryKeyItHolds() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(200))
			.build()) {
			TestLocks.warmUp(locks);
			try (LockHandle outer = locks.withLeaseTime(Duration.ofSeconds(1)).acquire("job:k1");
					LockHandle all = locks.acquireAll(java.util.List.of("job:k1", "job:k2"))) {
				assertThat(all.extend(Duration.ofSeconds(20))).isTrue();
				long k1 = (Long) this.redis.call("PTTL", "lockstep:job:k1");
				long k2 = (Long) this.redis.call("PTTL", "lockstep:job:k2");
				System.out.printf("extend(20s) of a handle on k1 (re-entered) and k2: %d ms and %d ms left%n", k1, k2);
				assertThat(k1).as("the re-entered key").isGreaterThan(15_000L);
				assertThat(k2).as("the key it acquired").isGreaterThan(15_000L);
				assertThat(outer.isHeld()).isTrue();
			}
		}
	}

	@Test
	void extendRejectsAMissingOrOutOfRangeLease() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				LockHandle lock = locks.acquire("job:bad-extend")) {
			assertThatIllegalArgumentException().isThrownBy(() -> lock.extend(null)).withMessageContaining("'lease'");
			assertThatIllegalArgumentException().isThrownBy(() -> lock.extend(Duration.ZERO))
				.withMessageContaining("'lease' must be between");
			assertThatIllegalArgumentException().isThrownBy(() -> lock.extend(Duration.ofDays(2)))
				.withMessageContaining("'lease' must be between");
			assertThat(lock.isHeld()).isTrue();
		}
	}

	@Test
	void extendFailsWithinTheCommandTimeoutWhileRedisDoesNotAnswer() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.leaseTime(Duration.ofSeconds(30))
			.commandTimeout(Duration.ofMillis(300))
			.build()) {
			TestLocks.warmUp(locks);
			LockHandle lock = locks.withLeaseTime(Duration.ofSeconds(30)).acquire("job:paused");
			this.redis.pause();
			long started = System.nanoTime();
			try {
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> lock.extend(Duration.ofSeconds(60)))
					.withMessageContaining("no answer within 300ms");
			}
			finally {
				this.redis.resume();
			}
			long tookMillis = (System.nanoTime() - started) / 1_000_000;
			System.out.printf("extend while Redis was paused: LockException after %d ms (command timeout 300 ms)%n",
					tookMillis);
			assertThat(tookMillis).isLessThan(3_000L);
			assertThat(lock.isHeld()).as("still held by its lease").isTrue();
			lock.close();
		}
	}

}
