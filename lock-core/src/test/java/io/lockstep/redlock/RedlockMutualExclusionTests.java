package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.LockException;
import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion on 5 masters: two templates (two lock clients with their own
 * connections, as two instances of an application would have) with 4 threads each take
 * one key over and over. Inside, an occupancy counter counts overlaps, a non-atomic
 * read-modify-write counts lost updates, and each holder's fencing token must be higher
 * than the previous holder's.
 */
@RedisTest
class RedlockMutualExclusionTests {

	private static final int THREADS_PER_TEMPLATE = 4;

	private static final int ITERATIONS = 250;

	private final AtomicInteger inside = new AtomicInteger();

	private final AtomicLong overlaps = new AtomicLong();

	private final AtomicLong tokenViolations = new AtomicLong();

	private final AtomicLong lastToken = new AtomicLong();

	private final AtomicLong done = new AtomicLong();

	private final AtomicLong failures = new AtomicLong();

	private volatile long counter;

	@Test
	void twoTemplatesWithFourThreadsEachNeverOverlapOnFiveMasters(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate first = RedlockNodes.on(nodes).builder().waitTime(Duration.ofMinutes(2)).build();
				RedisLockTemplate second = RedlockNodes.on(nodes).builder().waitTime(Duration.ofMinutes(2)).build()) {
			long start = System.nanoTime();
			contend(List.of(first, second), "stock:1", Duration.ofMinutes(4));
			long millis = Math.max(1, (System.nanoTime() - start) / 1_000_000);
			int total = 2 * THREADS_PER_TEMPLATE * ITERATIONS;
			System.out.printf(
					"Redlock, 5 masters, 2 templates x %d threads: %d acquisitions, %d overlaps, %d lost updates, "
							+ "%d fencing-order violations, %d lock failures, %d ms, %.0f acquisitions/s%n",
					THREADS_PER_TEMPLATE, this.done.get(), this.overlaps.get(), this.done.get() - this.counter,
					this.tokenViolations.get(), this.failures.get(), millis, this.done.get() * 1000.0 / millis);
			assertThat(this.overlaps.get()).isZero();
			assertThat(this.failures.get()).isZero();
			assertThat(this.done.get()).isEqualTo(total);
			assertThat(this.counter).isEqualTo(total);
			assertThat(this.tokenViolations.get()).isZero();
			for (RedisNode node : nodes) {
				assertThat(RedlockNodes.has(node, "lockstep:stock:1")).as("lock key left on %s", node).isFalse();
			}
		}
	}

	private void contend(List<LockTemplate> templates, String key, Duration timeout) throws Exception {
		int threads = templates.size() * THREADS_PER_TEMPLATE;
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				LockTemplate locks = templates.get(t % templates.size());
				futures.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < ITERATIONS; i++) {
						try {
							locks.execute(key, (lock) -> {
								inside(lock.fencingToken());
								return null;
							});
						}
						catch (LockException ex) {
							// counted, so that a broken lock shows its overlaps too
							this.failures.incrementAndGet();
						}
					}
					return null;
				}));
			}
			long deadline = System.nanoTime() + timeout.toNanos();
			for (Future<?> future : futures) {
				future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	private void inside(long fencingToken) {
		if (this.inside.incrementAndGet() != 1) {
			this.overlaps.incrementAndGet();
		}
		if (this.lastToken.getAndSet(fencingToken) >= fencingToken) {
			this.tokenViolations.incrementAndGet();
		}
		long value = this.counter;
		Thread.yield();
		this.counter = value + 1;
		this.inside.decrementAndGet();
		this.done.incrementAndGet();
	}

}
