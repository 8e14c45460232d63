package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Lockstep behind Sentinel (a master, a replica, 3 sentinels): during a failover a call
 * fails fast instead of waiting out its wait time, a call made again acquires soon after
 * the promotion, and the optional replica check refuses an acquisition no replica
 * confirmed.
 */
@RedisTest
class SentinelTests {

	@Test
	void waitersFailFastDuringAFailoverAndCallsMadeAgainAcquireSoonAfterThePromotion(RedisFixture fixture)
			throws Exception {
		Sentinels sentinels = fixture.sentinels(1, 3);
		RedisClient first = sentinelClient(sentinels);
		RedisClient second = sentinelClient(sentinels);
		try (RedisLockTemplate a = template(first, 0); RedisLockTemplate b = template(second, 0)) {
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicInteger done = new AtomicInteger();
			// a first connection through the sentinels can take longer than the command
			// timeout on a loaded machine, and a failed call is not retried
			TestLocks.warmUp(a, b);
			LockHandle held = a.acquire("failover");
			CountDownLatch waiting = new CountDownLatch(2);
			List<CompletableFuture<Long>> waiters = new ArrayList<>();
			for (RedisLockTemplate template : List.of(a, b)) {
				waiters.add(CompletableFuture.supplyAsync(() -> {
					waiting.countDown();
					return template.execute("failover", (lock) -> {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						inside.decrementAndGet();
						done.incrementAndGet();
						return System.nanoTime();
					});
				}));
			}
			List<CompletableFuture<Long>> endedAt = waiters.stream()
				.map((waiter) -> waiter.handle((acquiredAt, failure) -> System.nanoTime()))
				.toList();
			assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
			await("both wait").atMost(Duration.ofSeconds(5))
				.until(() -> Probes.engine(a).keysWaitedFor() == 1 && Probes.engine(b).keysWaitedFor() == 1);
			int oldMaster = sentinels.master().port();
			long killed = System.nanoTime();
			sentinels.master().kill();
			// a new acquisition on another key, started at once and made again after each
			// failure, as an application that retries would
			AtomicLong calls = new AtomicLong();
			CompletableFuture<long[]> fresh = CompletableFuture.supplyAsync(() -> {
				// a caller's retry delay of 50 ms between calls
				long acquiredAt = await().atMost(Duration.ofSeconds(40))
					.pollInterval(Duration.ofMillis(50))
					.ignoreExceptionsInstanceOf(LockException.class)
					.until(() -> {
						calls.incrementAndGet();
						return b.execute("fresh", (lock) -> System.nanoTime());
					}, (at) -> at != null);
				return new long[] { acquiredAt, calls.get() };
			});
			await("a sentinel promoted a replica").atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(20))
				.ignoreExceptionsInstanceOf(RuntimeException.class)
				.until(() -> sentinels.currentMasterPort() != oldMaster);
			long promoted = System.nanoTime();
			long[] freshCall = fresh.get(45, TimeUnit.SECONDS);
			try {
				held.close();
			}
			catch (LockException ex) {
				// the old master is gone: the lease is left to expire on the new one
			}
			List<String> outcomes = new ArrayList<>();
			int failedFast = 0;
			long lastFailureMillis = 0;
			for (int i = 0; i < waiters.size(); i++) {
				long endedMillis = (endedAt.get(i).get(40, TimeUnit.SECONDS) - killed) / 1_000_000;
				try {
					waiters.get(i).get();
					outcomes.add("acquired " + endedMillis + " ms after the kill");
				}
				catch (ExecutionException ex) {
					assertThat(ex.getCause()).as("how a waiter ended")
						.isExactlyInstanceOf(LockException.class)
						.hasMessageContaining("Could not acquire lock 'lockstep:failover'");
					outcomes.add("failed " + endedMillis + " ms after the kill (" + ex.getCause().getMessage() + ")");
					failedFast++;
					lastFailureMillis = Math.max(lastFailureMillis, endedMillis);
				}
			}
			int newMaster = sentinels.currentMasterPort();
			long failoverMillis = (promoted - killed) / 1_000_000;
			long afterPromotionMillis = (freshCall[0] - promoted) / 1_000_000;
			System.out.printf(
					"sentinel failover %d -> %d took %d ms: 2 waiters (wait 30 s): %s; %d overlaps; a call made "
							+ "again after each failure (%d calls) acquired %d ms after the promotion%n",
					oldMaster, newMaster, failoverMillis, outcomes, overlaps.get(), freshCall[1], afterPromotionMillis);
			assertThat(promoted).as("promoted").isPositive();
			assertThat(newMaster).isNotEqualTo(oldMaster);
			assertThat(failedFast).as("waiters that failed instead of waiting through the failover").isPositive();
			assertThat(lastFailureMillis).as("ms from the kill to the last failure, the wait being 30 s")
				.isLessThan(5_000);
			assertThat(afterPromotionMillis).isLessThanOrEqualTo(2_000);
			assertThat(done.get() + failedFast).isEqualTo(2);
			assertThat(overlaps.get()).isZero();
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	@Test
	void theReplicaCheckRefusesAnAcquisitionNoReplicaConfirmed(RedisFixture fixture) {
		RedisFixture.Replicated replicated = fixture.replicated(1);
		RedisNode master = replicated.master();
		RedisClient client = TestLocks.client(master);
		try (RedisLockTemplate locks = template(client, 1)) {
			TestLocks.warmUp(locks);
			try (LockHandle lock = locks.acquire("acked")) {
				assertThat(lock.isHeld()).isTrue();
			}
			replicated.replica().pause();
			try {
				long start = System.nanoTime();
				assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("unacked"))
					.withMessageContaining("only 0 of the 1 required replica(s) acknowledged");
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("replica paused: acquisition refused after %d ms, key left: %s%n", millis,
						master.call("EXISTS", "lockstep:unacked"));
				assertThat(master.call("EXISTS", "lockstep:unacked")).isEqualTo(0L);
			}
			finally {
				replicated.replica().resume();
			}
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * A paused replica makes every acquisition's WAIT block for its whole acknowledgement
	 * timeout; 8 threads keep acquiring other keys meanwhile. The holder of a key taken
	 * before keeps its lease for 3 leases: its renewals never queue behind a WAIT.
	 */
	@Test
	void aDeadReplicaRefusesAcquisitionsButNeverCostsAHolderItsLease(RedisFixture fixture) throws Exception {
		RedisFixture.Replicated replicated = fixture.replicated(1);
		RedisNode master = replicated.master();
		RedisClient client = TestLocks.client(master);
		AtomicInteger lost = new AtomicInteger();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(Duration.ofMillis(500))
			.leaseTime(Duration.ofMillis(1500))
			.waitTime(Duration.ofSeconds(10))
			.replicaAcknowledgements(1, Duration.ofSeconds(1))
			.lockLostListener((event) -> lost.incrementAndGet())
			.build()) {
			TestLocks.warmUp(locks);
			LockHandle held = locks.acquire("holder");
			replicated.replica().pause();
			AtomicInteger refused = new AtomicInteger();
			AtomicInteger acquired = new AtomicInteger();
			long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4500);
			List<CompletableFuture<Void>> threads = new ArrayList<>();
			ExecutorService pool = Executors.newFixedThreadPool(8);
			try {
				for (int t = 0; t < 8; t++) {
					String key = "other-" + t;
					threads.add(CompletableFuture.runAsync(() -> {
						while (System.nanoTime() - until < 0) {
							try {
								locks.tryAcquire(key).ifPresent((lock) -> {
									acquired.incrementAndGet();
									lock.close();
								});
							}
							catch (LockException ex) {
								refused.incrementAndGet();
							}
						}
					}, pool));
				}
				CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
				long pttl = (Long) master.call("PTTL", "lockstep:holder");
				System.out.printf(
						"replica paused, 8 threads acquiring other keys for 4.5 s (3 leases): %d refused, "
								+ "%d acquired; the holder's lease: held %s, %d lost event(s), PTTL %d ms%n",
						refused.get(), acquired.get(), held.isHeld(), lost.get(), pttl);
				assertThat(refused.get()).as("acquisitions refused by the replica check").isPositive();
				assertThat(held.isHeld()).as("the holder still holds its lease").isTrue();
				assertThat(lost.get()).as("lease-lost events").isZero();
				assertThat(pttl).as("PTTL of the held key").isPositive();
			}
			finally {
				pool.shutdownNow();
				replicated.replica().resume();
			}
			held.close();
		}
		finally {
			client.shutdown();
		}
	}

	private static RedisLockTemplate template(RedisClient client, int replicaAcks) {
		return TestLocks.builder(client)
			.commandTimeout(Duration.ofMillis(500))
			.leaseTime(Duration.ofSeconds(3))
			.waitTime(Duration.ofSeconds(30))
			.replicaAcknowledgements(replicaAcks, Duration.ofMillis(200))
			.build();
	}

	private static RedisClient sentinelClient(Sentinels sentinels) {
		RedisURI.Builder uri = RedisURI.builder();
		for (RedisNode sentinel : sentinels.sentinels()) {
			uri.withSentinel(sentinel.host(), sentinel.port());
		}
		return RedisClient.create(uri.withSentinelMasterId(Sentinels.MASTER_NAME).build());
	}

}
