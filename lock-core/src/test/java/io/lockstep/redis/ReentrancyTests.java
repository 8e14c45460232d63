package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.DistributedLocks;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Reentrancy per call context without Redis commands; the handle, not the thread, is the
 * owner; several keys are taken all or nothing without deadlock.
 */
@RedisTest
class ReentrancyTests {

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate locks;

	ReentrancyTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.locks = TestLocks.builder(this.client).build();
	}

	@AfterEach
	void disconnect() {
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void reentrySendsNoRedisCommandAndKeepsTheLockUntilTheOuterRelease() {
		try (LockHandle outer = this.locks.acquire("cart:1")) {
			long before = TestLocks.commandCalls(this.redis);
			String result = this.locks.execute("cart:1", (inner) -> {
				assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
				return this.locks.withWaitTime(Duration.ZERO).execute("cart:1", (innermost) -> "nested");
			});
			long after = TestLocks.commandCalls(this.redis);
			System.out.printf("re-entry twice: %d Redis commands sent%n", after - before);
			assertThat(result).isEqualTo("nested");
			assertThat(after - before).isZero();
			assertThat(outer.isHeld()).isTrue();
			assertThat(this.locks.isLocked("cart:1")).isTrue();
		}
		assertThat(this.locks.isLocked("cart:1")).isFalse();
	}

	@Test
	void currentFencingTokenIsTheInnermostLock() {
		assertThat(DistributedLocks.currentFencingToken()).isEmpty();
		this.locks.execute("a", (a) -> {
			assertThat(DistributedLocks.currentFencingToken()).isEqualTo(OptionalLong.of(a.fencingToken()));
			this.locks.execute("b", (b) -> {
				assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
				assertThat(DistributedLocks.currentFencingToken()).isEqualTo(OptionalLong.of(b.fencingToken()));
				return null;
			});
			assertThat(DistributedLocks.currentFencingToken()).isEqualTo(OptionalLong.of(a.fencingToken()));
			return null;
		});
		assertThat(DistributedLocks.currentFencingToken()).isEmpty();
	}

	@Test
	void anotherThreadDoesNotReenterButMayReleaseTheHandle() throws Exception {
		LockHandle lock = this.locks.acquire("cart:2");
		assertThat(CompletableFuture.supplyAsync(() -> this.locks.tryAcquire("cart:2").isPresent())
			.get(5, TimeUnit.SECONDS)).isFalse();
		CompletableFuture.runAsync(lock::close).get(5, TimeUnit.SECONDS);
		assertThat(lock.isHeld()).isFalse();
		assertThat(this.locks.isLocked("cart:2")).isFalse();
		lock.close(); // idempotent
	}

	@Test
	void fencingTokensKeepIncreasingAcrossLeaseExpiryAndRedisRestart() {
		LockHandle expiring = this.locks.withLeaseTime(Duration.ofMillis(100)).acquire("token");
		long first = expiring.fencingToken();
		await().atMost(Duration.ofSeconds(2)).until(() -> !this.locks.isLocked("token"));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(expiring::close);
		long afterExpiry = this.locks.execute("token", LockHandle::fencingToken);
		assertThat(afterExpiry).isGreaterThan(first);
		this.redis.restart(); // no persistence: the counter is gone
		long afterRestart = this.locks.execute("token", LockHandle::fencingToken);
		System.out.printf("fencing tokens: %d, after expiry %d, after a Redis restart that lost the counter %d%n",
				first, afterExpiry, afterRestart);
		assertThat(afterRestart).isGreaterThan(afterExpiry);
	}

	@Test
	void severalKeysAreTakenAllOrNothing() {
		try (LockHandle b = this.locks.acquire("b")) {
			assertThat(this.locks.withWaitTime(Duration.ofMillis(100)).tryAcquire("a")).isPresent()
				.get()
				.satisfies(LockHandle::close);
			// b is held by this thread's other lease: acquireAll must not take a or c
			CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(() -> {
				try {
					this.locks.withWaitTime(Duration.ofMillis(200)).acquireAll(List.of("a", "b", "c")).close();
					return true;
				}
				catch (io.lockstep.LockAcquisitionException ex) {
					return false;
				}
			});
			assertThat(other.join()).isFalse();
			assertThat(this.locks.isLocked("a")).isFalse();
			assertThat(this.locks.isLocked("c")).isFalse();
		}
		try (LockHandle all = this.locks.acquireAll(List.of("c", "a", "b"))) {
			assertThat(all.key()).isEqualTo("lockstep:a,lockstep:b,lockstep:c");
			assertThat(List.of("a", "b", "c")).allMatch(this.locks::isLocked);
		}
		assertThat(List.of("a", "b", "c")).noneMatch(this.locks::isLocked);
	}

	@Test
	void callersListingTheSameKeysInOtherOrdersNeverDeadlock() throws Exception {
		List<List<String>> orders = List.of(List.of("x", "y", "z"), List.of("z", "y", "x"), List.of("y", "x", "z"),
				List.of("z", "x", "y"));
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		CyclicBarrier start = new CyclicBarrier(orders.size());
		ExecutorService pool = Executors.newFixedThreadPool(orders.size());
		try {
			List<Future<Integer>> done = orders.stream().map((keys) -> pool.submit(() -> {
				start.await();
				int count = 0;
				for (int i = 0; i < 200; i++) {
					this.locks.withWaitTime(Duration.ofSeconds(30)).executeAll(keys, (lock) -> {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						inside.decrementAndGet();
						return null;
					});
					count++;
				}
				return count;
			})).toList();
			int total = 0;
			for (Future<Integer> future : done) {
				total += future.get(60, TimeUnit.SECONDS);
			}
			System.out.printf("multi-key: %d acquisitions of {x,y,z} listed in 4 orders, %d overlaps, no deadlock%n",
					total, overlaps.get());
			assertThat(total).isEqualTo(800);
			assertThat(overlaps.get()).isZero();
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void acquiringOneKeyOfAHeldSetReentersWithoutWaiting(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(3)).build();
				RedisLockTemplate other = TestLocks.builder(client).build()) {
			try (LockHandle all = locks.acquireAll(List.of("subset:a", "subset:b"))) {
				AtomicReference<LockHandle> inner = new AtomicReference<>();
				long start = System.nanoTime();
				Throwable failure = catchThrowable(() -> inner.set(locks.acquire("subset:a")));
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("acquire(a) holding acquireAll([a, b]): %s after %d ms (wait time 3000 ms)%n",
						(failure != null) ? failure : "re-entered", millis);
				assertThat(failure).as("acquire(\"subset:a\") while this thread holds acquireAll([a, b])").isNull();
				assertThat(millis).isLessThan(1_000);
				inner.get().close();
				assertThat(all.isHeld()).as("outer handle after the inner close").isTrue();
				assertThat(other.tryAcquire("subset:a")).as("another owner's tryAcquire(a) after the inner close")
					.isEmpty();
				assertThat(locks.isLocked("subset:b")).isTrue();
			}
			assertThat(locks.isLocked("subset:a")).isFalse();
			assertThat(locks.isLocked("subset:b")).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void acquiringASupersetOfAHeldKeyTakesTheMissingKeysWithoutWaiting(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(3)).build();
				RedisLockTemplate other = TestLocks.builder(client).build()) {
			try (LockHandle a = locks.acquire("superset:a")) {
				AtomicReference<LockHandle> inner = new AtomicReference<>();
				long start = System.nanoTime();
				Throwable failure = catchThrowable(
						() -> inner.set(locks.acquireAll(List.of("superset:a", "superset:b"))));
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("acquireAll([a, b]) holding acquire(a): %s after %d ms (wait time 3000 ms)%n",
						(failure != null) ? failure : "acquired", millis);
				assertThat(failure).as("acquireAll([a, b]) while this thread holds acquire(\"superset:a\")").isNull();
				assertThat(millis).isLessThan(1_000);
				assertThat(locks.isLocked("superset:b")).isTrue();
				inner.get().close();
				assertThat(a.isHeld()).as("outer handle of a after the inner close").isTrue();
				assertThat(other.tryAcquire("superset:a")).as("another owner's tryAcquire(a) after the inner close")
					.isEmpty();
				assertThat(locks.isLocked("superset:b")).as("b after the inner close").isFalse();
			}
			assertThat(locks.isLocked("superset:a")).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aKeyThatSpellsAHeldKeySetIsADifferentLock(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.keyPrefix("lockstep:")
			.waitTime(Duration.ofSeconds(1))
			.build()) {
			try (LockHandle all = locks.acquireAll(List.of("id:a", "id:b"))) {
				try (LockHandle single = locks.acquire("id:a,lockstep:id:b")) {
					boolean ownKey = ((Long) redis.call("EXISTS", "lockstep:id:a,lockstep:id:b")) == 1L;
					System.out.printf(
							"holding {id:a, id:b}: acquire(\"id:a,lockstep:id:b\") %s; fencing tokens %d, %d%n",
							ownKey ? "locked its own key" : "re-entered the key set", all.fencingToken(),
							single.fencingToken());
					assertThat(ownKey).as("Redis key 'lockstep:id:a,lockstep:id:b' exists while its lock is held")
						.isTrue();
				}
				assertThat(redis.call("EXISTS", "lockstep:id:a,lockstep:id:b")).isEqualTo(0L);
				assertThat(all.isHeld()).isTrue();
				assertThat(locks.isLocked("id:a")).isTrue();
				assertThat(locks.isLocked("id:b")).isTrue();
			}
		}
		finally {
			client.shutdown();
		}
	}

}
