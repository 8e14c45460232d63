package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.Release;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.Probes;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The validity rule: acquired only while {@code lease - elapsed - drift} is positive, and
 * the holder's local deadline is that validity's end.
 */
@RedisTest
class RedlockValidityTests {

	@Test
	void notAcquiredWhenTheQuorumAnswersAfterTheValidityTime(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
		try (RedisLockTemplate locks = RedlockNodes.on(nodes)
			.clockDriftFactor(0.5)
			.nodeTimeout(Duration.ofSeconds(5))
			.builder()
			.commandTimeout(Duration.ofSeconds(10))
			.build()) {
			locks.tryAcquire("warm-up").orElseThrow().close();
			LockStore store = Probes.engine(locks).store();
			String owner = "0123456789abcdef0123456789abcdef";
			// the fault: 3 nodes answer 600 ms late, past the validity of a 1 s lease
			// with
			// drift factor 0.5 (1000 - 600 - 502 < 0), while every granted key still
			// lives (the fence write-back finds them all): only the validity rule refuses
			for (RedisNode node : nodes.subList(0, 3)) {
				node.pause();
			}
			ScheduledFuture<?> resumed = scheduler.schedule(() -> nodes.subList(0, 3).forEach(RedisNode::resume), 600,
					TimeUnit.MILLISECONDS);
			long start = System.nanoTime();
			LockStore.Attempt attempt = store.acquire(Acquire.once(LockId.of("lockstep:late"), owner, 1000, 0));
			long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
			resumed.get(10, TimeUnit.SECONDS);
			System.out.printf(
					"Redlock, lease 1000 ms, drift 502 ms, quorum answered after %d ms: acquired %s, retry in %d ms%n",
					elapsedMillis, attempt.acquired(), attempt.holderTtlMillis());
			assertThat(elapsedMillis).isGreaterThan(502);
			assertThat(attempt.acquired()).isFalse();
			assertThat(attempt.holderTtlMillis()).isBetween(1L, Acquisitions.MAX_RETRY_DELAY_MILLIS);
			await("lock key left behind").atMost(Duration.ofSeconds(5))
				.until(() -> nodes.stream().noneMatch((node) -> RedlockNodes.has(node, "lockstep:late")));
			// the same owner, on time, is granted it
			LockStore.Attempt valid = store.acquire(Acquire.once(LockId.of("lockstep:late"), owner, 10_000, 0));
			assertThat(valid.acquired()).isTrue();
			assertThat(store.release(Release.of(LockId.of("lockstep:late"), owner))).isEqualTo(1);
		}
		finally {
			scheduler.shutdownNow();
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
