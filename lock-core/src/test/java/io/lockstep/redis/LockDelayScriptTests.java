package io.lockstep.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The scripts on values with a lock delay: a hand-off to a waiter with a delay,
 * renew/check/keep/release of a delayed key marked ":w" during and after its lease, the
 * max-hold cap with a delay, a semaphore permit in its delay.
 */
@RedisTest
class LockDelayScriptTests {

	private static final String A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	private static final String B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

	private static final String C = "cccccccccccccccccccccccccccccccc";

	private final RedisNode redis;

	private ScriptRunner scripts;

	LockDelayScriptTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.scripts = new ScriptRunner(this.redis);
	}

	@AfterEach
	void disconnect() {
		this.scripts.close();
	}

	@Test
	void aHandOffToAnExclusiveWaiterWithADelayStoresItAndItsRenewCheckAndKeepReadIt() {
		assertThat(this.scripts.acquire(A, 30_000, 0, "", 0).get(0)).isEqualTo(1L);
		assertThat(this.scripts.acquire(B, 10_000, 0, "n", 3_000).get(0)).isZero();
		assertThat(this.scripts.release(A)).isEqualTo(1L);
		String handed = this.scripts.value();
		System.out.printf("handed off with a delay: %s, PTTL %d%n", handed, this.scripts.pttl());
		assertThat(handed).startsWith(B + ":").matches(".*:0:3000:\\d+:w$");
		assertThat(this.scripts.pttl()).isBetween(12_000L, 13_000L);
		assertThat(this.scripts.check(B)).isEqualTo(1L);
		assertThat(this.scripts.renew(B, 20_000)).isEqualTo(20_000L);
		assertThat(this.scripts.value()).matches(B + ":\\d+:0:3000:\\d+:w$");
		assertThat(this.scripts.pttl()).isBetween(22_000L, 23_000L);
		assertThat(this.scripts.keep(B, 1_000)).isEqualTo(1L);
		System.out.printf("kept: %s, PTTL %d%n", this.scripts.value(), this.scripts.pttl());
		assertThat(this.scripts.value()).matches(B + ":\\d+:\\d+:w$");
		assertThat(this.scripts.pttl()).isBetween(1L, 1_000L);
		assertThat(this.scripts.renew(B, 20_000)).isLessThanOrEqualTo(1_000L);
	}

	@Test
	void aDelayedKeyMarkedAsWaitedForIsLostToItsOwnerAfterItsLeaseAndFreedAtOnceByItsRelease() throws Exception {
		assertThat(this.scripts.acquire(A, 200, 0, "", 3_000).get(0)).isEqualTo(1L);
		assertThat(this.scripts.acquire(B, 10_000, 0, "n", 0).get(0)).isZero();
		assertThat(this.scripts.value()).endsWith(":w");
		assertThat(this.scripts.check(A)).isOne();
		// A's lease of 200 ms ends (the point of the test)
		await().atMost(Duration.ofSeconds(2)).until(() -> this.scripts.check(A) == 0);
		assertThat(this.scripts.renew(A, 10_000)).isZero();
		assertThat(this.scripts.keep(A, 10_000)).isZero();
		assertThat(this.scripts.acquire(A, 10_000, 0, "q", 3_000).get(0)).as("its own retried acquire in the delay")
			.isZero();
		assertThat(this.scripts.acquire(C, 10_000, 0, "", 0).get(0)).isZero();
		assertThat(this.scripts.pttl()).isBetween(2_000L, 3_000L);
		assertThat(this.scripts.release(A)).as("not counted: the lease had ended").isZero();
		System.out.printf("released in its delay: %s%n", this.scripts.value());
		assertThat(this.scripts.value()).as("handed to the queued waiter").startsWith(B + ":");
	}

	@Test
	void theMaxHoldCapWithADelayEndsTheLeaseAtTheCapAndTheKeyADelayAfter() throws Exception {
		assertThat(this.scripts.acquire(A, 300, 300, "", 2_000).get(0)).isEqualTo(1L);
		long granted = this.scripts.renew(A, 10_000);
		assertThat(granted).isBetween(1L, 300L);
		assertThat(this.scripts.pttl()).isBetween(1_900L, 2_300L);
		// past the cap
		await().atMost(Duration.ofSeconds(2)).until(() -> this.scripts.check(A) == 0);
		assertThat(this.scripts.renew(A, 10_000)).isZero();
		assertThat(this.scripts.acquire(B, 10_000, 0, "", 0).get(0)).isZero();
	}

	@Test
	void aPermitInItsDelayStaysTakenAndIsFreedByItsRelease() throws Exception {
		assertThat(this.scripts.shared(A, 200, "s2", "w", 3_000).get(0)).isEqualTo(1L);
		assertThat(this.scripts.shared(B, 30_000, "s2", "w", 0).get(0)).isEqualTo(1L);
		assertThat(this.scripts.check(A)).isOne();
		// A's lease ends; its permit is in its delay
		await().atMost(Duration.ofSeconds(2)).until(() -> this.scripts.check(A) == 0);
		assertThat(this.scripts.renew(A, 10_000)).isZero();
		assertThat(this.scripts.shared(C, 30_000, "s2", "w", 0).get(0)).as("no permit free").isZero();
		assertThat(this.scripts.release(A)).isZero();
		assertThat(this.scripts.shared(C, 30_000, "s2", "w", 0).get(0)).isEqualTo(1L);
		System.out.printf("semaphore after the delayed permit left: %s%n", this.scripts.value());
	}

	@Test
	void aHandOffToReadersWithADelayStoresTheirDelay() {
		assertThat(this.scripts.acquire(A, 30_000, 0, "", 0).get(0)).isEqualTo(1L);
		assertThat(this.scripts.shared(B, 10_000, "r", "n", 2_000).get(0)).isZero();
		assertThat(this.scripts.shared(C, 10_000, "r", "n", 0).get(0)).isZero();
		assertThat(this.scripts.release(A)).isEqualTo(1L);
		System.out.printf("handed to readers: %s, PTTL %d%n", this.scripts.value(), this.scripts.pttl());
		assertThat(this.scripts.value()).startsWith("r|" + B + ",").contains(",2000|" + C + ",").endsWith(":w");
		assertThat(this.scripts.pttl()).isBetween(11_000L, 12_000L);
		assertThat(this.scripts.check(B)).isEqualTo(1L);
		assertThat(this.scripts.check(C)).isEqualTo(1L);
		assertThat(this.scripts.renew(B, 5_000)).isEqualTo(5_000L);
	}

}
