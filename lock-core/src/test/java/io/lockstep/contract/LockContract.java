package io.lockstep.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.Retried;
import io.lockstep.internal.engine.Probes;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract every topology keeps, run against real redis-server processes: two clients
 * with four threads each read-modify-write one unsynchronised counter under the lock of
 * one key; there are no overlaps and no lost updates, fencing tokens increase in the
 * order the lock was granted, and a released lock is free at once; re-entry, multi-key
 * locks, wake-up by notification and lease loss behave the same on every topology.
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

	/** The masters that store the locks of the templates last returned. */
	abstract List<RedisNode> masters();

	/**
	 * The lock name whose locks the templates give a lock delay of {@link #LOCK_DELAY}.
	 */
	static final String DELAYED = "delayed";

	static final Duration LOCK_DELAY = Duration.ofMillis(1_500);

	private long counter;

	/**
	 * A lease that ends without a release leaves the key unavailable for the lock delay
	 * after it (counted from the lease's end in the store), to every other client; a
	 * release frees it at once.
	 */
	@Test
	void aLeaseThatEndsWithoutAReleaseLeavesTheKeyUnavailableForTheLockDelay(RedisFixture fixture) throws Exception {
		List<AutoCloseable> closer = new ArrayList<>();
		try {
			List<RedisLockTemplate> templates = templates(fixture, closer);
			io.lockstep.LockTemplate first = templates.get(0).named(DELAYED);
			io.lockstep.LockTemplate second = templates.get(1).named(DELAYED);
			try (LockHandle released = first.acquire("released")) {
				assertThat(second.tryAcquire("released")).isEmpty();
			}
			assertThat(second.tryAcquire("released")).as("free at once after a release")
				.isPresent()
				.get()
				.satisfies(LockHandle::close);
			long lease = 400;
			LockHandle lost = first.withLeaseTime(Duration.ofMillis(lease)).acquire("lapsed");
			long granted = System.nanoTime();
			try (LockHandle next = second.withWaitTime(Duration.ofSeconds(10)).acquire("lapsed")) {
				long afterMillis = (System.nanoTime() - granted) / 1_000_000;
				System.out.printf(
						"%s: a fixed lease of %d ms ended without a release, lock delay %d ms: another "
								+ "client got the key %d ms after the grant%n",
						topology(), lease, LOCK_DELAY.toMillis(), afterMillis);
				assertThat(afterMillis).isBetween(lease + LOCK_DELAY.toMillis() - 100,
						lease + LOCK_DELAY.toMillis() + 1_500);
			}
			assertThat(lost.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::close);
		}
		finally {
			for (int i = closer.size() - 1; i >= 0; i--) {
				closer.get(i).close();
			}
		}
	}

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
	void reentryMultiKeyLocksWakeUpAndLeaseLossBehaveAlike(RedisFixture fixture) throws Exception {
		List<AutoCloseable> closer = new ArrayList<>();
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			List<RedisLockTemplate> templates = templates(fixture, closer);
			RedisLockTemplate first = templates.get(0);
			RedisLockTemplate second = templates.get(1);

			// re-entry: the same token, and the lock stays taken until the outer close
			try (LockHandle outer = first.acquire("contract:re")) {
				try (LockHandle inner = first.acquire("contract:re")) {
					assertThat(inner.fencingToken()).as("re-entry keeps the fencing token")
						.isEqualTo(outer.fencingToken());
				}
				assertThat(outer.isHeld()).isTrue();
				assertThat(free(second, "contract:re")).as("taken after the inner close").isFalse();
			}
			assertThat(free(second, "contract:re")).as("free after the outer close").isTrue();

			// several keys: all or nothing
			List<String> keys = List.of("contract:m1", "contract:m2", "contract:m3");
			try (LockHandle middle = first.acquire("contract:m2")) {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> second.withWaitTime(Duration.ZERO).acquireAll(keys));
				// on a Cluster the slots taken before the held one are undone without
				// waiting
				await("keys left taken by a multi-key lock that failed").atMost(Duration.ofSeconds(2))
					.until(() -> !first.isLocked("contract:m1") && !first.isLocked("contract:m3"));
			}
			try (LockHandle all = second.acquireAll(keys)) {
				for (String key : keys) {
					assertThat(free(first, key)).as("%s while the multi-key lock holds it", key).isFalse();
				}
			}
			for (String key : keys) {
				assertThat(free(first, key)).as("%s after the multi-key lock's release", key).isTrue();
			}

			// a waiter is woken by the release, not by a re-check (500 ms) or the lease
			List<Long> gaps = new ArrayList<>();
			for (int i = 0; i < 9; i++) {
				String key = "contract:wake:" + i;
				LockHandle held = first.acquire(key);
				CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
					try (LockHandle lock = second.withWaitTime(Duration.ofSeconds(10)).acquire(key)) {
						return System.nanoTime();
					}
				}, pool);
				await("the second client waits").atMost(Duration.ofSeconds(5))
					.until(() -> Probes.engine(second).keysWaitedFor() == 1);
				long released = System.nanoTime();
				held.close();
				gaps.add(acquiredAt.get(10, TimeUnit.SECONDS) - released);
			}
			Collections.sort(gaps);
			long median = gaps.get(gaps.size() / 2);

			// lease loss: the key deleted behind the holder's back
			LockHandle lost = first.acquire("contract:lost");
			deleteFromOutside("contract:lost");
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::verifyHeld);
			assertThat(lost.isHeld()).as("isHeld() once the loss was found").isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::close);
			assertThat(free(second, "contract:lost")).as("free for another client").isTrue();

			System.out.printf(
					"contract on %s: re-entry, 3-key all-or-nothing, lease loss ok; waiter woken %d us after the "
							+ "release (median of %d, max %d us)%n",
					topology(), median / 1_000, gaps.size(), gaps.get(gaps.size() - 1) / 1_000);
			assertThat(median).as("median wake-up after a release, ns").isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
		}
		finally {
			pool.shutdownNow();
			for (int i = closer.size() - 1; i >= 0; i--) {
				closer.get(i).close();
			}
		}
	}

	@Test
	void extendSetsTheLeaseInTheStoreAFixedLeaseStaysFixedAndAWatchdogLeaseGoesOnBeingRenewed(RedisFixture fixture)
			throws Exception {
		List<AutoCloseable> closer = new ArrayList<>();
		try {
			List<RedisLockTemplate> templates = templates(fixture, closer);
			RedisLockTemplate first = templates.get(0);
			RedisLockTemplate second = templates.get(1);
			// a first connection can be slower than the command timeout on a loaded
			// machine
			for (RedisLockTemplate template : templates) {
				Retried.call(() -> free(template, "contract:extend:warm-up"), Duration.ofSeconds(30),
						Duration.ofMillis(50));
			}

			// a fixed lease: extended in the store, longer and then shorter
			LockHandle fixed = first.withLeaseTime(Duration.ofSeconds(5)).acquire("contract:extend");
			assertThat(fixed.extend(Duration.ofSeconds(20))).as("extend of a held lock").isTrue();
			long longer = storedLeaseMillis("contract:extend");
			assertThat(longer).as("the lease in the store after extend(20s)").isBetween(15_000L, 20_000L);
			assertThat(fixed.extend(Duration.ofMillis(500))).isTrue();
			long shorter = storedLeaseMillis("contract:extend");
			assertThat(shorter).as("the lease in the store after extend(500ms)").isBetween(1L, 500L);
			// it stays fixed: nothing renews it, and another client takes the key after
			// it
			long extended = System.nanoTime();
			await("free once the shortened fixed lease ran out").atMost(Duration.ofSeconds(10))
				.until(() -> free(second, "contract:extend"));
			long freedAfter = (System.nanoTime() - extended) / 1_000_000;
			assertThat(fixed.isHeld()).isFalse();
			assertThat(fixed.extend(Duration.ofSeconds(5))).as("extend once the lease ran out").isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(fixed::close);

			// a key taken by another owner: extend is refused in the store, the lease
			// lost
			LockHandle gone = first.acquire("contract:extend:gone");
			deleteFromOutside("contract:extend:gone");
			try (LockHandle other = second.acquire("contract:extend:gone")) {
				assertThat(gone.extend(Duration.ofSeconds(5))).as("extend of a key another owner holds").isFalse();
				assertThat(gone.isHeld()).isFalse();
				assertThat(other.isHeld()).as("the other owner's lock is untouched").isTrue();
				assertThat(storedLeaseMillis("contract:extend:gone")).as("the other owner's lease, untouched")
					.isGreaterThan(5_000L);
			}
			assertThatExceptionOfType(LockLostException.class).isThrownBy(gone::close);

			// a watchdog lease shortened to 300 ms goes on being renewed with its own
			// lease
			LockHandle renewed = first.acquire("contract:extend:watchdog");
			assertThat(renewed.extend(Duration.ofMillis(300))).isTrue();
			assertThat(storedLeaseMillis("contract:extend:watchdog")).isBetween(1L, 300L);
			await("renewed by the watchdog after the extension").atMost(Duration.ofSeconds(5))
				.until(() -> storedLeaseMillis("contract:extend:watchdog") > 1_000);
			assertThat(renewed.isHeld()).isTrue();
			assertThat(free(second, "contract:extend:watchdog")).isFalse();
			renewed.close();
			assertThat(renewed.extend(Duration.ofSeconds(5))).as("extend after close").isFalse();
			assertThat(free(second, "contract:extend:watchdog")).isTrue();

			System.out.printf(
					"contract on %s: extend set the stored lease to %d ms (asked 20 s), then %d ms (asked 500 ms); "
							+ "the fixed lease ran out %d ms after; a watchdog lease went on being renewed%n",
					topology(), longer, shorter, freedAfter);
		}
		finally {
			for (int i = closer.size() - 1; i >= 0; i--) {
				closer.get(i).close();
			}
		}
	}

	/**
	 * The remaining lease of {@code key}'s lock in the store, in ms: the least over the
	 * masters that hold it (a Redlock quorum's lease is its least), or -2 when none does;
	 * its waiter queue and table are not the lock.
	 */
	private long storedLeaseMillis(String key) {
		long least = Long.MAX_VALUE;
		for (RedisNode master : masters()) {
			@SuppressWarnings("unchecked")
			List<Object> found = (List<Object>) master.call("KEYS", "lockstep:*" + key);
			for (Object stored : found) {
				String name = (String) stored;
				if (!name.contains("__q:") && !name.contains("__w:")) {
					least = Math.min(least, (Long) master.call("PTTL", (String) stored));
				}
			}
		}
		return (least == Long.MAX_VALUE) ? -2 : least;
	}

	/** Whether {@code key} is free for {@code locks} now (taken and released at once). */
	private static boolean free(RedisLockTemplate locks, String key) {
		Optional<LockHandle> lock = locks.tryAcquire(key);
		lock.ifPresent(LockHandle::close);
		return lock.isPresent();
	}

	/**
	 * Deletes the Redis keys of {@code key}'s lock on every master, as an operator could.
	 */
	private void deleteFromOutside(String key) {
		for (RedisNode master : masters()) {
			@SuppressWarnings("unchecked")
			List<Object> found = (List<Object>) master.call("KEYS", "lockstep:*" + key);
			for (Object stored : found) {
				master.call("DEL", (String) stored);
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
