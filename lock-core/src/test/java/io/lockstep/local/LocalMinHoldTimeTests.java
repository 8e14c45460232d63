package io.lockstep.local;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockHandle;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.Probes;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code withMinHoldTime} on the JVM-local backend: the same behaviour as on Redis.
 */
class LocalMinHoldTimeTests {

	@Test
	void anEarlyCloseLeavesTheLockTakenUntilTheMinimumHoldPasses() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().build()) {
			long before = System.nanoTime();
			LockHandle lock = locks.withMinHoldTime(Duration.ofMillis(1500)).acquire("job");
			long acquired = System.nanoTime();
			// models a run of 300 ms, shorter than the minimum hold (not synchronisation)
			Thread.sleep(300);
			long closing = System.nanoTime();
			lock.close();
			long left = locks.leaseRemaining("job").orElseThrow().toMillis();
			long read = System.nanoTime();
			System.out.printf("local: min hold 1500ms, closed after %d ms: %d ms left%n", millis(closing - before),
					left);
			assertThat(left).isBetween(1500 - millis(read - before) - 2, 1500 - millis(closing - acquired));
			assertThat(lock.isHeld()).isFalse();
			assertThat(Probes.engine(locks).registered()).isZero();
			assertThat(locks.tryAcquire("job")).isEmpty();
			await().atMost(Duration.ofSeconds(3)).until(() -> !locks.isLocked("job"));
			assertThat(millis(System.nanoTime() - before)).isBetween(1450L, 2500L);
			locks.tryAcquire("job").orElseThrow().close();
		}
	}

	@Test
	void aRunLongerThanTheMinimumHoldReleasesAtOnceAndWakesTheWaiter() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(10)).build()) {
			LockHandle lock = locks.withMinHoldTime(Duration.ofMillis(500)).acquire("long");
			CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
				try (LockHandle handle = locks.acquire("long")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(locks).keysWaitedFor() != 0);
			// models a run of 800 ms, longer than the minimum hold (not synchronisation)
			Thread.sleep(800);
			long closed = System.nanoTime();
			lock.close();
			long handOff = millis(next.get(5, TimeUnit.SECONDS) - closed);
			System.out.printf("local: min hold 500ms, held 800ms+: close -> waiter acquired in %d ms%n", handOff);
			assertThat(handOff).isLessThan(300);
			assertThat(locks.isLocked("long")).isFalse();
		}
	}

	@Test
	void aWaiterGetsTheLockOnlyWhenTheMinimumHoldPasses() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofSeconds(10)).build()) {
			long before = System.nanoTime();
			LockHandle lock = locks.withMinHoldTime(Duration.ofSeconds(1)).acquire("waited");
			CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
				try (LockHandle handle = locks.acquire("waited")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(locks).keysWaitedFor() != 0);
			lock.close();
			long after = millis(next.get(8, TimeUnit.SECONDS) - before);
			System.out.printf("local: min hold 1s, closed at once: the waiter acquired after %d ms%n", after);
			assertThat(after).isBetween(950L, 2500L);
		}
	}

	@Test
	void keepNeverTouchesAnotherOwnersKeyAndNotifiesNoWaiter() {
		List<String> notified = new CopyOnWriteArrayList<>();
		LocalStore backend = new LocalStore(notified::add);
		LockId id = LockId.of("taken");
		assertThat(backend.acquire(LockStore.Acquire.once(id, "other", 60_000, 0)).acquired()).isTrue();
		assertThat(backend.release(LockStore.Release.keep(id, "me", 1000))).isZero();
		assertThat(backend.remainingLease("taken")).isGreaterThan(59_000L);
		assertThat(backend.release(LockStore.Release.keep(id, "other", 1000))).isOne();
		assertThat(backend.remainingLease("taken")).isBetween(900L, 1000L);
		// a renewal after the keep cannot extend it
		backend.renew(List.of(new LockStore.Renewal(id, "other", 30_000)));
		assertThat(backend.remainingLease("taken")).isBetween(1L, 1000L);
		assertThat(notified).as("no waiter is woken: the key is still taken").isEmpty();
		assertThat(backend.release(LockStore.Release.of(id, "other"))).isOne();
		assertThat(notified).containsExactly("taken");
		backend.close();
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

}
