package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Many waiters of one client for one key: only the longest-waiting one talks to Redis
 * while the lock is held, and each release costs about one attempt, not one per waiter.
 */
@RedisTest
class ManyWaitersTests {

	private static final int WAITERS = 400;

	@Test
	void manyLocalWaitersCostAboutOneAttemptPerRelease(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		RedisClient holderClient = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(120)).build();
				RedisLockTemplate holder = TestLocks.builder(holderClient).build()) {
			LockHandle held = holder.acquire("crowded");
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicInteger done = new AtomicInteger();
			CountDownLatch started = new CountDownLatch(WAITERS);
			CountDownLatch finished = new CountDownLatch(WAITERS);
			List<Thread> threads = new ArrayList<>();
			for (int i = 0; i < WAITERS; i++) {
				Thread thread = new Thread(() -> {
					started.countDown();
					try {
						locks.execute("crowded", (lock) -> {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							inside.decrementAndGet();
							return done.incrementAndGet();
						});
					}
					finally {
						finished.countDown();
					}
				}, "waiter-" + i);
				threads.add(thread);
				thread.start();
			}
			assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
			// the first waiter asks Redis; the others find it waiting and queue up behind
			// it locally without asking: wait until all are queued and no script ran for
			// 300 ms (the head re-checks every 500 ms), then the hold lasts 2 s more
			long[] last = { -1, System.nanoTime() };
			await().atMost(Duration.ofSeconds(60)).until(() -> {
				long now = TestLocks.commandCalls(redis, "evalsha");
				if (now != last[0]) {
					last[0] = now;
					last[1] = System.nanoTime();
				}
				return now >= 1 && System.nanoTime() - last[1] > TimeUnit.MILLISECONDS.toNanos(300)
						&& Probes.engine(locks).waitersOf("lockstep:crowded") == WAITERS;
			});
			System.out.printf("%d waiters parked after %d scripts%n", WAITERS, last[0]);
			assertThat(last[0]).as("scripts run while %d waiters arrived", WAITERS).isLessThan(WAITERS / 4);
			long before = TestLocks.commandCalls(redis, "evalsha");
			Eventually.holds(Duration.ofSeconds(2), () -> false); // the hold
			long duringHold = TestLocks.commandCalls(redis, "evalsha") - before;
			long start = System.nanoTime();
			long beforeHandOffs = TestLocks.commandCalls(redis, "evalsha");
			held.close();
			assertThat(finished.await(90, TimeUnit.SECONDS)).as("all waiters got the lock").isTrue();
			long millis = (System.nanoTime() - start) / 1_000_000;
			long scripts = TestLocks.commandCalls(redis, "evalsha") - beforeHandOffs;
			double perAcquisition = (double) scripts / WAITERS;
			System.out.printf(
					"%d waiters in one client on one held key: %d scripts during a 2 s hold; after release all "
							+ "acquired in %d ms (%.0f hand-offs/s), %.2f scripts per acquisition (acquire + "
							+ "release), %d overlaps%n",
					WAITERS, duringHold, millis, WAITERS * 1000.0 / Math.max(1, millis), perAcquisition,
					overlaps.get());
			assertThat(done.get()).isEqualTo(WAITERS);
			assertThat(overlaps.get()).isZero();
			// only the head re-checks (every 500 ms): a few scripts, not one per waiter
			assertThat(duringHold).isLessThan(20);
			// an acquire and a release each, plus the head's occasional extra attempt
			assertThat(perAcquisition).isLessThan(3.5);
			for (Thread thread : threads) {
				thread.join(5_000);
			}
		}
		finally {
			client.shutdown();
			holderClient.shutdown();
		}
	}

}
