package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lockstep.DistributedLocks;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease state machine under chaos: many short acquisitions, renewals and releases
 * while another thread deletes held keys from outside and pauses Redis briefly. Every
 * loss must be real (its key was deleted from outside), every real loss must be reported
 * (by the release at the latest), and nothing may stay registered.
 */
@RedisTest
class LeaseStateMachineTests {

	private static final int ACQUISITIONS = 20_000;

	private static final int THREADS = 8;

	private static final int KEYS = 64;

	private static final Duration LEASE = Duration.ofMillis(600);

	/** GET and DEL in one step, so the test knows whose key it deleted. */
	private static final String TAKE = "local v = redis.call('GET', KEYS[1]) if v then redis.call('DEL', KEYS[1]) end "
			+ "return v";

	@Test
	void twentyThousandInterleavingsGiveNoFalseLossNoMissedLossAndNoLeakedEntry(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		Set<Long> deletedFromOutside = ConcurrentHashMap.newKeySet();
		Map<Long, AtomicInteger> events = new ConcurrentHashMap<>();
		Set<Long> conservative = ConcurrentHashMap.newKeySet();
		Set<Long> lostAtClose = ConcurrentHashMap.newKeySet();
		Set<Long> held = ConcurrentHashMap.newKeySet();
		AtomicInteger acquisitions = new AtomicInteger();
		AtomicInteger renewedHolds = new AtomicInteger();
		AtomicInteger reentries = new AtomicInteger();
		AtomicInteger timeouts = new AtomicInteger();
		AtomicInteger pauses = new AtomicInteger();
		AtomicInteger leftOnThreads = new AtomicInteger();
		AtomicBoolean done = new AtomicBoolean();
		ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(LEASE.dividedBy(3))
			.waitTime(Duration.ofSeconds(2))
			.lockLostListener((event) -> {
				events.computeIfAbsent(event.getFencingToken(), (f) -> new AtomicInteger()).incrementAndGet();
				if (event.getReason().contains("by the local clock")) {
					conservative.add(event.getFencingToken());
				}
			})
			.build()) {
			Future<?> chaos = pool.submit(() -> chaos(redis, deletedFromOutside, pauses, done));
			CountDownLatch workers = new CountDownLatch(THREADS);
			for (int t = 0; t < THREADS; t++) {
				pool.submit(() -> {
					try {
						while (acquisitions.incrementAndGet() <= ACQUISITIONS) {
							cycle(locks, held, lostAtClose, renewedHolds, reentries, timeouts);
						}
						if (DistributedLocks.currentFencingToken().isPresent()) {
							leftOnThreads.incrementAndGet();
						}
					}
					finally {
						workers.countDown();
					}
				});
			}
			assertThat(workers.await(5, TimeUnit.MINUTES)).as("workers finished").isTrue();
			done.set(true);
			chaos.get(10, TimeUnit.SECONDS);
			// listeners run on their own thread: wait (bounded) until every loss is told
			Eventually.holds(Duration.ofSeconds(5), () -> events.keySet().containsAll(lostAtClose));

			Set<Long> reported = ConcurrentHashMap.newKeySet();
			reported.addAll(lostAtClose);
			reported.addAll(events.keySet());
			// a lease that no renewal confirmed in time (a starved client) is given up on
			// by the
			// local clock: conservative, counted apart
			long falseLosses = reported.stream()
				.filter((fence) -> !deletedFromOutside.contains(fence) && !conservative.contains(fence))
				.count();
			// a lock handed to a queued waiter that gave up meanwhile (its attempt timed
			// out
			// during a pause) is held by no handle until the waiter's leave frees it
			long neverTaken = deletedFromOutside.stream().filter((fence) -> !held.contains(fence)).count();
			long missedLosses = deletedFromOutside.stream()
				.filter((fence) -> held.contains(fence) && !lostAtClose.contains(fence))
				.count();
			long toldTwice = events.values().stream().filter((count) -> count.get() > 1).count();
			int leaked = locks.heldLocks().size() + Probes.engine(locks).registered();
			System.out.printf(
					"lease state machine: %,d acquisitions (%,d renewed at least once, %,d re-entered, %,d wait "
							+ "timeouts), %,d keys deleted from outside, %d Redis pauses -> %d false losses, %d missed "
							+ "losses, %d losses told twice, %d leaked held-lock entries, %d threads left holding (%d "
							+ "conservative local-clock expiries, %d deleted keys handed off but never taken)%n",
					ACQUISITIONS, renewedHolds.get(), reentries.get(), timeouts.get(), deletedFromOutside.size(),
					pauses.get(), falseLosses, missedLosses, toldTwice, leaked, leftOnThreads.get(),
					conservative.size(), neverTaken);
			assertThat(neverTaken).as("keys handed off but never taken").isLessThan(10);
			assertThat(deletedFromOutside).as("keys deleted from outside").hasSizeGreaterThan(100);
			assertThat(renewedHolds.get()).as("holds that outlived a renewal").isGreaterThan(100);
			assertThat(falseLosses).as("losses reported for keys nobody deleted").isZero();
			assertThat(missedLosses).as("keys deleted from outside whose loss was not reported").isZero();
			assertThat(toldTwice).isZero();
			assertThat(conservative.size()).as("conservative expiries").isLessThan(ACQUISITIONS / 200);
			assertThat(leaked).as("held-lock entries left").isZero();
			assertThat(leftOnThreads.get()).isZero();
			assertThat(locks.leasesLost()).isEqualTo(reported.size());
		}
		finally {
			done.set(true);
			pool.shutdownNow();
			redis.resume();
			client.shutdown();
		}
	}

	private static void cycle(RedisLockTemplate locks, Set<Long> held, Set<Long> lostAtClose,
			AtomicInteger renewedHolds, AtomicInteger reentries, AtomicInteger timeouts) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		String key = "sm:" + random.nextInt(KEYS);
		LockHandle handle;
		try {
			handle = locks.acquire(key);
		}
		catch (LockAcquisitionException ex) {
			timeouts.incrementAndGet();
			return;
		}
		long fence = handle.fencingToken();
		held.add(fence);
		try {
			if (random.nextInt(20) == 0) {
				reentries.incrementAndGet();
				try (LockHandle inner = locks.acquire(key)) {
					assertThat(inner.fencingToken()).isEqualTo(fence);
				}
			}
			// mostly short holds; some span one or more renewals (every lease/3)
			long holdMillis = (random.nextInt(32) == 0) ? LEASE.toMillis() / 2 + random.nextInt(300)
					: random.nextInt(6);
			if (holdMillis > LEASE.toMillis() / 3) {
				renewedHolds.incrementAndGet();
			}
			sleep(holdMillis);
		}
		finally {
			try {
				handle.close();
			}
			catch (LockLostException ex) {
				lostAtClose.add(fence);
			}
		}
	}

	private static void chaos(RedisNode redis, Set<Long> deleted, AtomicInteger pauses, AtomicBoolean done) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long nextPause = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
		while (!done.get()) {
			Object value = redis.call("EVAL", TAKE, "1", "lockstep:sm:" + random.nextInt(KEYS));
			if (value instanceof String text) {
				deleted.add(Long.parseLong(text.split(":")[1]));
			}
			if (System.nanoTime() - nextPause >= 0) {
				// shorter than what a renewal may take (the command timeout): never a
				// loss
				redis.pause();
				sleep(10 + random.nextInt(30));
				redis.resume();
				pauses.incrementAndGet();
				nextPause = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200 + random.nextInt(400));
			}
			sleep(8);
		}
	}

	/** Models elapsed time: a hold, a pause of Redis, the chaos loop's pace. */
	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
