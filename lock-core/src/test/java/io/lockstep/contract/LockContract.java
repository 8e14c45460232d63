package io.lockstep.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockHandle;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract every topology keeps, run against real redis-server processes: two clients
 * with four threads each read-modify-write one unsynchronised counter under the lock of
 * one key; there are no overlaps and no lost updates, fencing tokens increase in the
 * order the lock was granted, and a released lock is free at once.
 */
@RedisTest
abstract class LockContract {

	static final int THREADS_PER_CLIENT = 4;

	static final int ROUNDS = 150;

	/** The topology's name, as printed. */
	abstract String topology();

	/**
	 * Starts the topology and returns two templates on two clients; {@code closer}
	 * collects what to close afterwards.
	 */
	abstract List<RedisLockTemplate> templates(RedisFixture fixture, List<AutoCloseable> closer) throws Exception;

	private long counter;

	@Test
	void twoClientsExcludeEachOtherWithExactCountsAndIncreasingFencingTokens(RedisFixture fixture) throws Exception {
		List<AutoCloseable> closer = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(2 * THREADS_PER_CLIENT);
		try {
			List<RedisLockTemplate> templates = templates(fixture, closer);
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicInteger fenceViolations = new AtomicInteger();
			long[] lastFence = { 0 };
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < 2 * THREADS_PER_CLIENT; t++) {
				RedisLockTemplate locks = templates.get(t % 2);
				workers.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < ROUNDS; i++) {
						locks.execute("contract", (lock) -> {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							if (lock.fencingToken() <= lastFence[0]) {
								fenceViolations.incrementAndGet();
							}
							lastFence[0] = lock.fencingToken();
							long read = this.counter;
							Thread.yield();
							this.counter = read + 1;
							inside.decrementAndGet();
							return null;
						});
					}
					return null;
				}));
			}
			long began = System.nanoTime();
			start.countDown();
			for (Future<?> worker : workers) {
				worker.get(3, TimeUnit.MINUTES);
			}
			long millis = (System.nanoTime() - began) / 1_000_000;
			long expected = 2L * THREADS_PER_CLIENT * ROUNDS;
			System.out.printf(
					"contract on %s: 2 clients x %d threads, %d acquisitions in %d ms: %d overlaps, counter "
							+ "%d of %d, %d fencing-order violations%n",
					topology(), THREADS_PER_CLIENT, expected, millis, overlaps.get(), this.counter, expected,
					fenceViolations.get());
			assertThat(overlaps.get()).isZero();
			assertThat(this.counter).isEqualTo(expected);
			assertThat(fenceViolations.get()).isZero();
			try (LockHandle lock = templates.get(1).withWaitTime(Duration.ZERO).acquire("contract")) {
				assertThat(lock.isHeld()).as("a released lock is free at once").isTrue();
			}
		}
		finally {
			pool.shutdownNow();
			for (int i = closer.size() - 1; i >= 0; i--) {
				closer.get(i).close();
			}
		}
	}

	@Test
	void reactiveSubscribersAndBlockingThreadsExcludeEachOther(RedisFixture fixture) throws Exception {
		List<AutoCloseable> closer = new ArrayList<>();
		ExecutorService pool = Executors.newFixedThreadPool(THREADS_PER_CLIENT);
		try {
			List<RedisLockTemplate> templates = templates(fixture, closer);
			ReactiveLockTemplate reactive = ReactiveLocks.of(templates.get(0));
			RedisLockTemplate blocking = templates.get(1);
			int rounds = ROUNDS / 3;
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			long[] counter = { 0 };
			Runnable critical = () -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				long read = counter[0];
				Thread.yield();
				counter[0] = read + 1;
				inside.decrementAndGet();
			};
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < THREADS_PER_CLIENT; t++) {
				workers.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < rounds; i++) {
						blocking.execute("reactive-contract", (lock) -> {
							critical.run();
							return null;
						});
					}
					return null;
				}));
			}
			long began = System.nanoTime();
			start.countDown();
			Long reactiveDone = Flux.range(0, THREADS_PER_CLIENT)
				.flatMap((subscriber) -> Flux.range(0, rounds)
					.concatMap((i) -> reactive.execute("reactive-contract",
							(lock) -> Mono.fromRunnable(critical).thenReturn(i)))
					.subscribeOn(Schedulers.parallel()), THREADS_PER_CLIENT)
				.count()
				.block(Duration.ofMinutes(3));
			for (Future<?> worker : workers) {
				worker.get(3, TimeUnit.MINUTES);
			}
			long millis = (System.nanoTime() - began) / 1_000_000;
			long expected = 2L * THREADS_PER_CLIENT * rounds;
			System.out.printf(
					"contract on %s: %d reactive subscribers (client 1) and %d threads (client 2), %d acquisitions "
							+ "in %d ms: %d overlaps, counter %d of %d%n",
					topology(), THREADS_PER_CLIENT, THREADS_PER_CLIENT, expected, millis, overlaps.get(), counter[0],
					expected);
			assertThat(reactiveDone).isEqualTo(THREADS_PER_CLIENT * rounds);
			assertThat(overlaps.get()).isZero();
			assertThat(counter[0]).isEqualTo(expected);
		}
		finally {
			pool.shutdownNow();
			for (int i = closer.size() - 1; i >= 0; i--) {
				closer.get(i).close();
			}
		}
	}

}
