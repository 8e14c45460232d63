package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redlock with nodes down: a minority down (SIGKILL and SIGSTOP) costs nothing, a
 * majority down fails acquisition with a clear exception and leaves nothing behind, and a
 * lease that a quorum cannot renew is reported lost.
 */
@RedisTest
class RedlockFaultTests {

	private static final Duration LEASE = Duration.ofMillis(1500);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);

	@Test
	void acquiresAndRenewsWithTwoOfFiveNodesDown(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		CountDownLatch lost = new CountDownLatch(1);
		try (RedisLockTemplate locks = template(nodes, (event) -> lost.countDown())) {
			nodes.get(0).kill();
			nodes.get(1).pause();
			try {
				long start = System.nanoTime();
				LockHandle lock = locks.acquire("minority");
				long acquireMillis = (System.nanoTime() - start) / 1_000_000;
				// no loss within three leases: renewed on the three live nodes all along
				boolean lostMeanwhile = lost.await(3 * LEASE.toMillis(), TimeUnit.MILLISECONDS);
				long[] ttls = nodes.subList(2, 5)
					.stream()
					.mapToLong((node) -> (Long) node.call("PTTL", "lockstep:minority"))
					.toArray();
				System.out.printf(
						"Redlock, 1 of 5 nodes SIGKILLed and 1 SIGSTOPped: acquired in %d ms, still held "
								+ "after %d ms (3 leases), remaining lease on the live nodes %d/%d/%d ms%n",
						acquireMillis, 3 * LEASE.toMillis(), ttls[0], ttls[1], ttls[2]);
				assertThat(lostMeanwhile).as("lease lost with only a minority down").isFalse();
				assertThat(lock.isHeld()).isTrue();
				assertThat(java.util.Arrays.stream(ttls).min().getAsLong()).isPositive();
				lock.close();
				assertThat(nodes.subList(2, 5)).noneMatch((node) -> RedlockNodes.has(node, "lockstep:minority"));
				assertThat(locks.tryAcquire("minority")).isPresent().get().satisfies(LockHandle::close);
			}
			finally {
				nodes.get(1).resume();
			}
		}
	}

	@Test
	void failsWithALockExceptionAndLeavesNothingBehindWithThreeOfFiveNodesDown(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate locks = template(nodes, (event) -> {
		})) {
			// connected to every node first, so that the paused one takes the command
			locks.tryAcquire("majority").orElseThrow().close();
			nodes.get(0).kill();
			nodes.get(1).kill();
			nodes.get(2).pause();
			AtomicBoolean ran = new AtomicBoolean();
			try {
				long start = System.nanoTime();
				// a 30 s lease: only the undo, not the lease, can clear the live nodes in
				// time
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> locks.withLeaseTime(Duration.ofSeconds(30))
						.execute("majority", (lock) -> ran.getAndSet(true)))
					.isNotInstanceOf(LockAcquisitionException.class)
					.satisfies((ex) -> System.out.printf("Redlock, 3 of 5 nodes down: failed after %d ms with %s%n",
							(System.nanoTime() - start) / 1_000_000, ex.getMessage()))
					.withMessageContaining("'lockstep:majority'")
					.withMessageContaining("only 2 of 5 nodes answered, a quorum is 3")
					.withMessageContaining(nodes.get(0).uri())
					.withMessageContaining(nodes.get(2).uri() + ": no reply within the node timeout");
				assertThat(ran).as("the guarded work ran").isFalse();
				await("lock key left on the live nodes").atMost(Duration.ofSeconds(5))
					.until(() -> nodes.subList(3, 5)
						.stream()
						.noneMatch((node) -> RedlockNodes.has(node, "lockstep:majority")));
			}
			finally {
				nodes.get(2).resume();
			}
			// the paused node runs the late acquire and then its undo
			await("lock key left on the resumed node").atMost(Duration.ofSeconds(5))
				.until(() -> !RedlockNodes.has(nodes.get(2), "lockstep:majority"));
		}
	}

	@Test
	void aLeaseThatAQuorumCannotRenewIsLost(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		CountDownLatch signalled = new CountDownLatch(1);
		AtomicReference<LockLostEvent> event = new AtomicReference<>();
		AtomicLong signalledAt = new AtomicLong();
		try (RedisLockTemplate locks = template(nodes, (lost) -> {
			signalledAt.set(System.nanoTime());
			event.set(lost);
			signalled.countDown();
		})) {
			LockHandle lock = locks.acquire("unrenewable");
			nodes.get(0).pause();
			nodes.get(1).pause();
			nodes.get(2).pause();
			long pausedAt = System.nanoTime();
			try {
				long bound = LEASE.toMillis() + 1_500;
				assertThat(signalled.await(bound, TimeUnit.MILLISECONDS)).as("loss signalled within %d ms", bound)
					.isTrue();
				System.out.printf(
						"Redlock, 3 of 5 nodes SIGSTOPped while held: loss signalled after %d ms (lease %d "
								+ "ms): %s%n",
						(signalledAt.get() - pausedAt) / 1_000_000, LEASE.toMillis(), event.get().getReason());
				assertThat(event.get().getKey()).isEqualTo("lockstep:unrenewable");
				assertThat(event.get().getFencingToken()).isEqualTo(lock.fencingToken());
				assertThat(event.get().getReason()).contains("no renewal confirmed");
				assertThat(lock.isHeld()).isFalse();
				assertThat(locks.leasesLost()).isEqualTo(1);
				assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close)
					.withMessageContaining("lockstep:unrenewable");
			}
			finally {
				nodes.get(0).resume();
				nodes.get(1).resume();
				nodes.get(2).resume();
			}
		}
	}

	@Test
	void aLeaseWhoseKeyAQuorumLostIsLostAtTheNextRenewal(RedisFixture fixture) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		CountDownLatch signalled = new CountDownLatch(1);
		AtomicReference<LockLostEvent> event = new AtomicReference<>();
		try (RedisLockTemplate locks = template(nodes, (lost) -> {
			event.set(lost);
			signalled.countDown();
		})) {
			LockHandle lock = locks.acquire("deleted");
			// a quorum decided the acquire; the last nodes may run it a moment later
			await().atMost(Duration.ofSeconds(5))
				.until(() -> nodes.stream().allMatch((node) -> RedlockNodes.has(node, "lockstep:deleted")));
			for (RedisNode node : nodes.subList(0, 3)) {
				assertThat(node.call("DEL", "lockstep:deleted")).isEqualTo(1L);
			}
			long deleted = System.nanoTime();
			long bound = LEASE.toMillis() / 3 + 1_000;
			assertThat(signalled.await(bound, TimeUnit.MILLISECONDS)).as("loss signalled within %d ms", bound).isTrue();
			System.out.printf("Redlock, key deleted on 3 of 5 nodes: loss signalled after %d ms%n",
					(System.nanoTime() - deleted) / 1_000_000);
			assertThat(event.get().getReason()).contains("gone or held by another owner");
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
		}
	}

	private static RedisLockTemplate template(List<RedisNode> nodes, io.lockstep.LockLostListener listener) {
		return Redlock.nodes(RedlockNodes.uris(nodes))
			.nodeTimeout(Duration.ofMillis(200))
			.builder()
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.waitTime(Duration.ofSeconds(5))
			.lockLostListener(listener)
			.build();
	}

}
