package io.lockstep.local;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lock delay on JVM-local locks, as on Redis: a lease that ends without a release leaves
 * the key unavailable for the delay after it; a release frees it at once; a lost reader's
 * share holds writers up, not readers. The next holders ask from another thread (this one
 * would re-enter its own lock).
 */
class LocalLockDelayTests {

	private static final Duration LEASE = Duration.ofMillis(300);

	private static final Duration DELAY = Duration.ofMillis(1_000);

	@Test
	void aLeaseThatEndsWithoutAReleaseLeavesTheKeyUnavailableForTheDelay() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder()
			.lockDelay(DELAY)
			.waitTime(Duration.ofSeconds(5))
			.build()) {
			LockHandle lost = locks.withLeaseTime(LEASE).acquire("job");
			long granted = System.nanoTime();
			long afterMillis = CompletableFuture.supplyAsync(() -> {
				try (LockHandle next = locks.acquire("job")) {
					return (System.nanoTime() - granted) / 1_000_000;
				}
			}).join();
			System.out.printf("local: lease %d ms lapsed, lock delay %d ms: the next holder got in after %d ms%n",
					LEASE.toMillis(), DELAY.toMillis(), afterMillis);
			assertThat(afterMillis).isBetween(LEASE.plus(DELAY).toMillis() - 100, LEASE.plus(DELAY).toMillis() + 1_000);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::close);
			locks.acquire("job").close();
			assertThat(CompletableFuture.supplyAsync(() -> locks.tryExecute("job", LockHandle::key)).join())
				.as("free at once after a release")
				.isPresent();
		}
	}

	@Test
	void aLostReadersShareHoldsWritersUpButNotReaders() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().lockDelay(DELAY).build()) {
			LockHandle lost = locks.read().withLeaseTime(LEASE).acquire("doc");
			long granted = System.nanoTime();
			long afterMillis = CompletableFuture.supplyAsync(() -> {
				while (lost.isHeld()) {
					Thread.onSpinWait();
				}
				Optional<LockHandle> reader = locks.read().tryAcquire("doc");
				assertThat(reader).as("another reader joins").isPresent();
				reader.get().close();
				assertThat(locks.tryAcquire("doc")).as("a writer, in the delay").isEmpty();
				try (LockHandle writer = locks.withWaitTime(Duration.ofSeconds(5)).acquire("doc")) {
					return (System.nanoTime() - granted) / 1_000_000;
				}
			}).join();
			System.out.printf("local: a reader's lease %d ms lapsed, lock delay %d ms: a writer got in after %d ms%n",
					LEASE.toMillis(), DELAY.toMillis(), afterMillis);
			assertThat(afterMillis).isBetween(LEASE.plus(DELAY).toMillis() - 100, LEASE.plus(DELAY).toMillis() + 1_000);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::close);
		}
	}

}
