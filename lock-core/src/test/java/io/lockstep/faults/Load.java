package io.lockstep.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.LockTemplate;

/**
 * Threads that take locks over and over, each time running the ledger's critical section:
 * first on one hot key, then on keys spread at random over {@code spreadKeys}. Without a
 * template (the control) they run it with no lock.
 */
final class Load {

	static final String HOT = "hot";

	final AtomicLong overlaps = new AtomicLong();

	final AtomicLong done = new AtomicLong();

	private final LockTemplate locks;

	private final Ledger ledger;

	Load(LockTemplate locks, Ledger ledger) {
		this.locks = locks;
		this.ledger = ledger;
	}

	static String spreadKey(int index) {
		return "spread:" + index;
	}

	void run(int threads, int hotPerThread, int spreadPerThread, int spreadKeys, Duration timeout) throws Exception {
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				futures.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < hotPerThread; i++) {
						once(HOT);
					}
					for (int i = 0; i < spreadPerThread; i++) {
						once(spreadKey(ThreadLocalRandom.current().nextInt(spreadKeys)));
					}
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

	private void once(String key) {
		boolean overlap = (this.locks != null) ? this.locks.execute(key, (lock) -> this.ledger.criticalSection(key))
				: this.ledger.criticalSection(key);
		if (overlap) {
			this.overlaps.incrementAndGet();
		}
		this.done.incrementAndGet();
	}

}
