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

	private RedisClient client;

	private LockCommands commands;

	LockDelayScriptTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.commands = new LockCommands(this.client, Duration.ofSeconds(2));
		this.redis.call("FLUSHALL");
	}

	@AfterEach
	void disconnect() {
		this.commands.close();
		this.client.shutdown();
	}

	private List<Long> acquire(String owner, long lease, long maxHold, String mode, long delay) {
		return this.commands.eval(
				LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"), List.of(owner, Long.toString(lease),
						Long.toString(maxHold), mode, "5000", "chan", Long.toString(lease), Long.toString(delay)),
				"acquire");
	}

	private List<Long> shared(String owner, long lease, String kind, String mode, long delay) {
		return this.commands.eval(LockScripts.ACQUIRE_SHARED, List.of("k", "fence", "q", "t"), List.of(owner,
				Long.toString(lease), "0", kind, mode, "5000", "chan", Long.toString(lease), Long.toString(delay)),
				"shared");
	}

	private long release(String owner) {
		return this.commands.eval(LockScripts.RELEASE, List.of("k", "q", "t", "fence"),
				List.of(owner, "released", "PUBLISH", "queues", ""), "release");
	}

	private long renew(String owner, long lease) {
		List<Long> reply = this.commands.eval(LockScripts.RENEW, List.of("k"), List.of(owner, Long.toString(lease)),
				"renew");
		return reply.get(0);
	}

	private long check(String owner) {
		return this.commands.<Long>eval(LockScripts.CHECK, List.of("k"), List.of(owner), "check");
	}

	private long keep(String owner, long millis) {
		return this.commands.<Long>eval(LockScripts.KEEP, List.of("k"), List.of(owner, Long.toString(millis)), "keep");
	}

	private String value() {
		return (String) this.redis.call("GET", "k");
	}

	private long pttl() {
		return (Long) this.redis.call("PTTL", "k");
	}

	@Test
	void aHandOffToAnExclusiveWaiterWithADelayStoresItAndItsRenewCheckAndKeepReadIt() {
		assertThat(acquire(A, 30_000, 0, "", 0).get(0)).isEqualTo(1L);
		assertThat(acquire(B, 10_000, 0, "n", 3_000).get(0)).isZero();
		assertThat(release(A)).isEqualTo(1L);
		String handed = value();
		System.out.printf("handed off with a delay: %s, PTTL %d%n", handed, pttl());
		assertThat(handed).startsWith(B + ":").matches(".*:0:3000:\\d+:w$");
		assertThat(pttl()).isBetween(12_000L, 13_000L);
		assertThat(check(B)).isEqualTo(1L);
		assertThat(renew(B, 20_000)).isEqualTo(20_000L);
		assertThat(value()).matches(B + ":\\d+:0:3000:\\d+:w$");
		assertThat(pttl()).isBetween(22_000L, 23_000L);
		assertThat(keep(B, 1_000)).isEqualTo(1L);
		System.out.printf("kept: %s, PTTL %d%n", value(), pttl());
		assertThat(value()).matches(B + ":\\d+:\\d+:w$");
		assertThat(pttl()).isBetween(1L, 1_000L);
		assertThat(renew(B, 20_000)).isLessThanOrEqualTo(1_000L);
	}

	@Test
	void aDelayedKeyMarkedAsWaitedForIsLostToItsOwnerAfterItsLeaseAndFreedAtOnceByItsRelease() throws Exception {
		assertThat(acquire(A, 200, 0, "", 3_000).get(0)).isEqualTo(1L);
		assertThat(acquire(B, 10_000, 0, "n", 0).get(0)).isZero();
		assertThat(value()).endsWith(":w");
		Thread.sleep(300); // A's lease of 200 ms ends (the point of the test)
		assertThat(check(A)).isZero();
		assertThat(renew(A, 10_000)).isZero();
		assertThat(keep(A, 10_000)).isZero();
		assertThat(acquire(A, 10_000, 0, "q", 3_000).get(0)).as("its own retried acquire in the delay").isZero();
		assertThat(acquire(C, 10_000, 0, "", 0).get(0)).isZero();
		assertThat(pttl()).isBetween(2_000L, 3_000L);
		assertThat(release(A)).as("not counted: the lease had ended").isZero();
		System.out.printf("released in its delay: %s%n", value());
		assertThat(value()).as("handed to the queued waiter").startsWith(B + ":");
	}

	@Test
	void theMaxHoldCapWithADelayEndsTheLeaseAtTheCapAndTheKeyADelayAfter() throws Exception {
		assertThat(acquire(A, 300, 300, "", 2_000).get(0)).isEqualTo(1L);
		long granted = renew(A, 10_000);
		assertThat(granted).isBetween(1L, 300L);
		assertThat(pttl()).isBetween(1_900L, 2_300L);
		Thread.sleep(400); // past the cap
		assertThat(renew(A, 10_000)).isZero();
		assertThat(check(A)).isZero();
		assertThat(acquire(B, 10_000, 0, "", 0).get(0)).isZero();
	}

	@Test
	void aPermitInItsDelayStaysTakenAndIsFreedByItsRelease() throws Exception {
		assertThat(shared(A, 200, "s2", "w", 3_000).get(0)).isEqualTo(1L);
		assertThat(shared(B, 30_000, "s2", "w", 0).get(0)).isEqualTo(1L);
		Thread.sleep(300); // A's lease ends; its permit is in its delay
		assertThat(check(A)).isZero();
		assertThat(renew(A, 10_000)).isZero();
		assertThat(shared(C, 30_000, "s2", "w", 0).get(0)).as("no permit free").isZero();
		assertThat(release(A)).isZero();
		assertThat(shared(C, 30_000, "s2", "w", 0).get(0)).isEqualTo(1L);
		System.out.printf("semaphore after the delayed permit left: %s%n", value());
	}

	@Test
	void aHandOffToReadersWithADelayStoresTheirDelay() {
		assertThat(acquire(A, 30_000, 0, "", 0).get(0)).isEqualTo(1L);
		assertThat(shared(B, 10_000, "r", "n", 2_000).get(0)).isZero();
		assertThat(shared(C, 10_000, "r", "n", 0).get(0)).isZero();
		assertThat(release(A)).isEqualTo(1L);
		System.out.printf("handed to readers: %s, PTTL %d%n", value(), pttl());
		assertThat(value()).startsWith("r|" + B + ",").contains(",2000|" + C + ",").endsWith(":w");
		assertThat(pttl()).isBetween(11_000L, 12_000L);
		assertThat(check(B)).isEqualTo(1L);
		assertThat(check(C)).isEqualTo(1L);
		assertThat(renew(B, 5_000)).isEqualTo(5_000L);
	}

}
