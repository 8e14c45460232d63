package io.lockstep.local;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link LockHandle#extend(Duration)} on the JVM-local store: the same behaviour as on
 * Redis (see {@code LockContract}).
 */
class LocalLeaseExtensionTests {

	@Test
	void extendSetsTheLeaseAndAFixedLeaseStaysFixed() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().build()) {
			LockHandle lock = locks.withLeaseTime(Duration.ofSeconds(1)).acquire("job");
			assertThat(lock.extend(Duration.ofSeconds(20))).isTrue();
			long longer = locks.leaseRemaining("job").orElseThrow().toMillis();
			assertThat(longer).as("after extend(20s)").isBetween(19_000L, 20_000L);
			assertThat(lock.extend(Duration.ofMillis(300))).isTrue();
			long shorter = locks.leaseRemaining("job").orElseThrow().toMillis();
			assertThat(shorter).as("after extend(300ms)").isBetween(1L, 300L);
			long extended = System.nanoTime();
			// another owner: this thread would re-enter
			await("free for another owner once the shortened fixed lease ran out").atMost(Duration.ofSeconds(5))
				.until(() -> CompletableFuture.supplyAsync(() -> locks.tryAcquire("job").map((other) -> {
					other.close();
					return true;
				}).orElse(false)).join());
			long freedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - extended);
			System.out.printf("local: extend set the lease to %d ms, then %d ms; free %d ms after%n", longer, shorter,
					freedAfter);
			assertThat(lock.isHeld()).isFalse();
			assertThat(lock.extend(Duration.ofSeconds(5))).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
		}
	}

	@Test
	void extendNeverPassesTheMaxHoldCapAndAWatchdogLeaseGoesOnBeingRenewed() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder()
			.leaseTime(Duration.ofMillis(600))
			.maxHoldTime(Duration.ofSeconds(3))
			.build()) {
			try (LockHandle lock = locks.acquire("watched")) {
				assertThat(lock.extend(Duration.ofDays(1))).isTrue();
				assertThat(locks.leaseRemaining("watched").orElseThrow().toMillis()).isBetween(1L, 3_000L);
				assertThat(lock.extend(Duration.ofMillis(100))).isTrue();
				assertThat(locks.leaseRemaining("watched").orElseThrow().toMillis()).isBetween(1L, 100L);
				await("renewed by the watchdog after the extension").atMost(Duration.ofSeconds(5))
					.until(() -> locks.leaseRemaining("watched").orElseThrow().toMillis() > 300);
				assertThat(lock.isHeld()).isTrue();
			}
		}
	}

}
