package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;

import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.internal.engine.LockBackend;
import io.lockstep.internal.engine.LockId;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The validity rule: acquired only while {@code lease - elapsed - drift} is positive, and
 * the holder's local deadline is that validity's end.
 */
@RedisTest
class RedlockValidityTests {

	@Test
	void notAcquiredWhenNoValidityIsLeftEvenThoughEveryNodeGrantedIt(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate locks = RedlockNodes.on(nodes).builder().build()) {
			LockBackend backend = locks.engine().backend();
			String owner = "0123456789abcdef0123456789abcdef";
			// drift = 2 ms × 0.01 + 2 ms > a lease of 2 ms: no validity, whatever the
			// elapsed time
			LockBackend.Attempt attempt = backend.tryAcquire(LockId.of("lockstep:short"), owner, 2, 0);
			System.out.printf("Redlock, lease 2 ms (drift 2.02 ms): acquired %s, retry in %d ms%n", attempt.acquired(),
					attempt.holderTtlMillis());
			assertThat(attempt.acquired()).isFalse();
			assertThat(attempt.holderTtlMillis()).isBetween(1L, Acquisitions.MAX_RETRY_DELAY_MILLIS);
			// a valid lease of the same owner is granted by the same nodes
			LockBackend.Attempt valid = backend.tryAcquire(LockId.of("lockstep:short"), owner, 10_000, 0);
			assertThat(valid.acquired()).isTrue();
			assertThat(backend.release(LockId.of("lockstep:short"), owner)).isEqualTo(1);
		}
	}

	@Test
	void theLocalDeadlineIsTheEndOfTheValidityTime(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		Duration lease = Duration.ofSeconds(10);
		try (RedisLockTemplate locks = RedlockNodes.on(nodes).clockDriftFactor(0.1).builder().build()) {
			locks.tryAcquire("warm-up").orElseThrow().close();
			long before = System.nanoTime();
			try (LockHandle lock = locks.withLeaseTime(lease).acquire("valid")) {
				LockInfo info = locks.heldLocks().get(0);
				long elapsed = System.nanoTime() - before;
				long drift = lease.toNanos() / 10 + 2_000_000;
				long validity = lease.toNanos() - drift;
				long remaining = info.leaseRemaining().toNanos();
				System.out.printf(
						"Redlock, lease %d ms, drift factor 0.1: drift %d ms, local lease left %.1f ms "
								+ "(validity %d ms minus the %.1f ms the acquire took, at most)%n",
						lease.toMillis(), drift / 1_000_000, remaining / 1e6, validity / 1_000_000, elapsed / 1e6);
				assertThat(remaining).isLessThanOrEqualTo(validity).isGreaterThanOrEqualTo(validity - elapsed);
				assertThat(lock.isHeld()).isTrue();
			}
		}
	}

}
