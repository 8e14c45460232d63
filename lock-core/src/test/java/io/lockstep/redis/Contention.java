package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.LockTemplate;

/**
 * Threads that take one lock over and over and check, in a separate never-faulted
 * "ledger" Redis, that no two holders are ever inside at once (an INCR/DECR occupancy
 * counter), that no update is lost (a non-atomic GET-then-SET counter) and that every
 * holder's fencing token is higher than the previous holder's (GETSET of the last token).
 */
final class Contention {

	final AtomicLong overlaps = new AtomicLong();

	final AtomicLong tokenViolations = new AtomicLong();

	final AtomicLong done = new AtomicLong();

	private final LockTemplate locks;

	private final RedisCommands<String, String> ledger;

	private final String key;

	Contention(LockTemplate locks, RedisCommands<String, String> ledger, String key) {
		this.locks = locks;
		this.ledger = ledger;
		this.key = key;
	}

	void run(int threads, int iterations, Duration timeout) throws Exception {
		inParallel(threads, timeout, (thread) -> {
			for (int i = 0; i < iterations; i++) {
				this.locks.execute(this.key, (lock) -> {
					inside(lock.fencingToken());
					return null;
				});
			}
		});
	}

	/** What one of the threads of {@link #inParallel} does. */
	interface ThreadWork {

		void run(int thread) throws Exception;

	}

	/**
	 * Runs the work on {@code threads} threads that start together (a barrier), and waits
	 * for all of them, at most {@code timeout} each.
	 */
	static void inParallel(int threads, Duration timeout, ThreadWork work) throws Exception {
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					start.await();
					work.run(thread);
					return null;
				}));
			}
			for (Future<?> future : futures) {
				future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	private void inside(long fencingToken) {
		if (this.ledger.incr("inside:" + this.key) != 1) {
			this.overlaps.incrementAndGet();
		}
		String previous = this.ledger.getset("token:" + this.key, Long.toString(fencingToken));
		if (previous != null && Long.parseLong(previous) >= fencingToken) {
			this.tokenViolations.incrementAndGet();
		}
		String value = this.ledger.get("counter:" + this.key);
		long next = (value != null) ? Long.parseLong(value) + 1 : 1;
		this.ledger.set("counter:" + this.key, Long.toString(next));
		this.ledger.decr("inside:" + this.key);
		this.done.incrementAndGet();
	}

}
