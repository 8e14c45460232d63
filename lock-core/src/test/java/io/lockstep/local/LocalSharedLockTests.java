package io.lockstep.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Read/write locks and semaphores in the JVM-local mode: readers share a key while
 * writers exclude everyone, a semaphore admits at most its permits, a waiting writer is
 * not starved, upgrades and mismatched permits are refused at once; the same rules as on
 * Redis ({@code SharedLockTests}).
 */
class LocalSharedLockTests {

	private static final int THREADS = 8;

	private static final int ITERATIONS = 1_250;

	@Test
	void readersOverlapWhileWritersExcludeEveryone() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofMinutes(1)).build()) {
			Contention result = contend(locks, 0);
			System.out.printf(
					"local read/write, %d threads: %d acquisitions (%d writes), %d writer overlaps, %d fencing "
							+ "violations, most readers inside at once %d%n",
					THREADS, result.done.get(), result.writes.get(), result.violations.get(), result.fencing.get(),
					result.most.get());
			assertThat(result.done.get()).isEqualTo(THREADS * ITERATIONS);
			assertThat(result.writes.get()).isEqualTo(THREADS * ITERATIONS / 10);
			assertThat(result.violations.get()).isZero();
			assertThat(result.fencing.get()).isZero();
			assertThat(result.most.get()).isGreaterThanOrEqualTo(2);
			assertThat(locks.isLocked("doc:1")).isFalse();
		}
	}

	@Test
	void aSemaphoreOfThreeAdmitsThreeAtOnceAndNeverMore() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofMinutes(1)).build()) {
			Contention result = contend(locks, 3);
			System.out.printf(
					"local semaphore of 3, %d threads: %d acquisitions, %d times more than 3 inside, %d fencing "
							+ "violations, most inside at once %d%n",
					THREADS, result.done.get(), result.violations.get(), result.fencing.get(), result.most.get());
			assertThat(result.done.get()).isEqualTo(THREADS * ITERATIONS);
			assertThat(result.violations.get()).isZero();
			assertThat(result.fencing.get()).isZero();
			assertThat(result.most.get()).isEqualTo(3);
			assertThat(locks.isLocked("doc:1")).isFalse();
		}
	}

	/**
	 * Three readers keep the key read-held (each holds 30 ms and asks again at once); a
	 * writer asks, and the readers that come after it wait behind it: it gets in within a
	 * few of their holds, not never.
	 */
	@Test
	void aWriterAmongThreeOverlappingReadersGetsInQuickly() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(30)).build()) {
			AtomicBoolean writerDone = new AtomicBoolean();
			AtomicBoolean writerAsked = new AtomicBoolean();
			AtomicInteger readsAfterWriterAsked = new AtomicInteger();
			AtomicInteger inside = new AtomicInteger();
			CountDownLatch threeInside = new CountDownLatch(1);
			ExecutorService pool = Executors.newFixedThreadPool(3);
			List<Future<?>> futures = new ArrayList<>();
			LocalLockTemplate readers = locks.read();
			for (int t = 0; t < 3; t++) {
				futures.add(pool.submit(() -> {
					while (!writerDone.get()) {
						readers.execute("doc:2", (lock) -> {
							if (inside.incrementAndGet() == 3) {
								threeInside.countDown();
							}
							if (writerAsked.get()) {
								readsAfterWriterAsked.incrementAndGet();
							}
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(30));
							inside.decrementAndGet();
							return null;
						});
					}
					return null;
				}));
			}
			assertThat(threeInside.await(30, TimeUnit.SECONDS)).isTrue();
			long asked = System.nanoTime();
			writerAsked.set(true);
			try (LockHandle lock = locks.write().acquire("doc:2")) {
				long waitedMillis = (System.nanoTime() - asked) / 1_000_000;
				int readersInside = inside.get();
				writerDone.set(true);
				System.out.printf(
						"local: writer among 3 overlapping readers (30 ms holds): in after %d ms, %d reads began after "
								+ "it asked, %d readers inside with it%n",
						waitedMillis, readsAfterWriterAsked.get(), readersInside);
				assertThat(readersInside).isZero();
				assertThat(waitedMillis).isLessThan(3_000);
			}
			for (Future<?> future : futures) {
				future.get(30, TimeUnit.SECONDS);
			}
			pool.shutdown();
		}
	}

	/**
	 * A reader that asks without waiting (past the local queue, where the writer waits)
	 * finds the key marked by the waiting writer: it does not get in, though only readers
	 * hold the key.
	 */
	@Test
	void aReaderThatComesAfterAWaitingWriterDoesNotGetIn() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(30)).build()) {
			LockHandle first = locks.read().acquire("doc:5");
			ExecutorService writerThread = Executors.newSingleThreadExecutor();
			Future<Long> writer = writerThread.submit(() -> {
				try (LockHandle lock = locks.write().acquire("doc:5")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> Probes.engine(locks).keysWaitedFor() != 0);
			assertThat(Probes.engine(locks).keysWaitedFor()).as("the writer waits").isOne();
			LocalLockTemplate noWait = locks.withWaitTime(Duration.ZERO).read();
			Optional<LockHandle> late = onItsOwnThread(() -> noWait.tryAcquire("doc:5"));
			late.ifPresent(LockHandle::close);
			long closed = System.nanoTime();
			first.close();
			long writerInMillis = (writer.get(10, TimeUnit.SECONDS) - closed) / 1_000_000;
			System.out.printf("local: a reader after a waiting writer got in: %s; the writer was in %d ms after the "
					+ "first reader left%n", late.isPresent(), writerInMillis);
			assertThat(late).isEmpty();
			assertThat(writerInMillis).isLessThan(1_000);
			assertThat(onItsOwnThread(() -> noWait.tryAcquire("doc:5"))).hasValueSatisfying(LockHandle::close);
			writerThread.shutdown();
		}
	}

	@Test
	void holdingTheReadLockAndAskingForTheWriteLockFailsAtOnce() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(10)).build()) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class)
				.isThrownBy(() -> locks.read().execute("doc:3", (lock) -> locks.write().execute("doc:3", (inner) -> 1)))
				.withMessageContaining("holds the read lock of 'lockstep:doc:3' and asked for its write lock");
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("local: upgrade refused after %d ms (wait time 10 s)%n", millis);
			assertThat(millis).isLessThan(5_000);
			assertThat(locks.isLocked("doc:3")).isFalse();
		}
	}

	@Test
	void askingForTheReadLockWhileHoldingTheWriteLockReenters() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(1)).build()) {
			long start = System.nanoTime();
			long[] tokens = locks.write()
				.execute("doc:4", (outer) -> new long[] { outer.fencingToken(),
						locks.read().execute("doc:4", LockHandle::fencingToken) });
			System.out.printf("local: read inside write re-entered with the same fencing token %d after %d ms%n",
					tokens[1], (System.nanoTime() - start) / 1_000_000);
			assertThat(tokens[1]).isEqualTo(tokens[0]);
			assertThat(locks.isLocked("doc:4")).isFalse();
		}
	}

	/**
	 * Every acquisition on a thread of its own (no reentrance): the store itself refuses,
	 * naming both numbers, and nothing is acquired.
	 */
	@Test
	void anotherNumberOfPermitsIsRefusedAtOnceNamingBothNumbers() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(5)).build()) {
			LockHandle permit = onItsOwnThread(() -> locks.withPermits(3).acquire("export:2"));
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.withPermits(2).acquire("export:2"))
				.withMessageContaining("Lock 'lockstep:export:2' is held as a semaphore of 3 permits")
				.withMessageContaining("asked for a semaphore of 2 permits");
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.acquire("export:2"))
				.withMessageContaining("held as a semaphore of 3 permits")
				.withMessageContaining("asked for the write lock (1 permit)");
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.read().acquire("export:2"))
				.withMessageContaining("held as a semaphore of 3 permits")
				.withMessageContaining("asked for the read lock");
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("local: permits 2, 1 and a read against a semaphore of 3: refused after %d ms (wait time "
					+ "5 s)%n", millis);
			assertThat(millis).isLessThan(2_500);
			// nothing was acquired: the other two permits are still free, and only they
			LocalLockTemplate now = locks.withWaitTime(Duration.ZERO).withPermits(3);
			Optional<LockHandle> second = onItsOwnThread(() -> now.tryAcquire("export:2"));
			Optional<LockHandle> third = onItsOwnThread(() -> now.tryAcquire("export:2"));
			assertThat(second).isPresent();
			assertThat(third).isPresent();
			assertThat(onItsOwnThread(() -> now.tryAcquire("export:2"))).isEmpty();
			second.get().close();
			third.get().close();
			permit.close();
			assertThat(locks.isLocked("export:2")).isFalse();
		}
	}

	/** Runs the task on a new thread, which holds no lock yet. */
	private static <T> T onItsOwnThread(Callable<T> task) throws Exception {
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			return thread.submit(task).get(10, TimeUnit.SECONDS);
		}
		finally {
			thread.shutdown();
		}
	}

	/**
	 * {@code permits} threads of a semaphore (0: read/write locks, one write in ten) take
	 * one key over and over, about 1 ms inside, and count who is inside at once.
	 */
	private static Contention contend(LocalLockTemplate locks, int permits) throws Exception {
		Contention contention = new Contention(permits);
		LocalLockTemplate shared = (permits > 0) ? locks.withPermits(permits) : locks.read();
		LocalLockTemplate writer = locks.write();
		CyclicBarrier start = new CyclicBarrier(THREADS);
		ExecutorService pool = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					start.await();
					for (int i = 0; i < ITERATIONS; i++) {
						if (permits == 0 && (i + thread) % 10 == 0) {
							writer.execute("doc:1", (lock) -> contention.exclusive(lock.fencingToken()));
						}
						else {
							shared.execute("doc:1", (lock) -> contention.shared(lock.fencingToken()));
						}
						contention.done.incrementAndGet();
					}
					return null;
				}));
			}
			for (Future<?> future : futures) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
		return contention;
	}

	/**
	 * Who is inside at once: a writer with anyone else, or more permit holders than
	 * permits, is a violation. Every fencing token must be new, and a writer's above
	 * every token of a holder that entered before it.
	 */
	private static final class Contention {

		final AtomicInteger sharing = new AtomicInteger();

		final AtomicInteger writing = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

		final AtomicLong violations = new AtomicLong();

		final AtomicLong fencing = new AtomicLong();

		final AtomicLong done = new AtomicLong();

		final AtomicLong writes = new AtomicLong();

		private final AtomicLong highest = new AtomicLong();

		private final Set<Long> tokens = ConcurrentHashMap.newKeySet();

		/** The most holders inside at once: the permits, or any number of readers. */
		private final int limit;

		Contention(int permits) {
			this.limit = (permits > 0) ? permits : Integer.MAX_VALUE;
		}

		Void shared(long fencingToken) {
			int inside = this.sharing.incrementAndGet();
			if (inside > this.limit || this.writing.get() != 0) {
				this.violations.incrementAndGet();
			}
			this.most.accumulateAndGet(inside, Math::max);
			token(fencingToken);
			LockSupport.parkNanos(1_000_000);
			this.sharing.decrementAndGet();
			return null;
		}

		Void exclusive(long fencingToken) {
			int writers = this.writing.incrementAndGet();
			if (writers != 1 || this.sharing.get() != 0) {
				this.violations.incrementAndGet();
			}
			if (fencingToken <= this.highest.get()) {
				this.fencing.incrementAndGet();
			}
			token(fencingToken);
			LockSupport.parkNanos(1_000_000);
			this.writing.decrementAndGet();
			this.writes.incrementAndGet();
			return null;
		}

		private void token(long fencingToken) {
			if (!this.tokens.add(fencingToken)) {
				this.fencing.incrementAndGet();
			}
			this.highest.accumulateAndGet(fencingToken, Math::max);
		}

	}

}
