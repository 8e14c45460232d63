package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;

import io.lockstep.LockHandle;
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
 * The Redlock fencing guarantee: a lock's token is the highest among the nodes that
 * granted it, written back to their counters before the lock is reported acquired, so a
 * later grant by a quorum that shares only one node with the earlier one still gets a
 * higher token, however far the nodes' own counters are apart.
 */
@RedisTest
class RedlockFencingTests {

	/** A node counter far ahead of the others (below 2^53, exact in Lua). */
	private static final long AHEAD = 5_000_000_000_000_000L;

	@Test
	void tokensIncreaseWhenTheNextQuorumSharesOneNodeWithThePreviousOne(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate first = template(nodes); RedisLockTemplate second = template(nodes)) {
			// connected to every node before any is paused
			first.tryAcquire("warm-up").orElseThrow().close();
			second.tryAcquire("warm-up").orElseThrow().close();
			// node 1 has issued far higher tokens than the others (or its clock runs
			// ahead)
			nodes.get(0).call("SET", "lockstep:__fence", Long.toString(AHEAD));
			long earlier;
			// granted by nodes 1, 2, 3
			pause(nodes, 3, 4);
			try (LockHandle lock = first.acquire("invoice:7")) {
				earlier = lock.fencingToken();
			}
			finally {
				resume(nodes, 3, 4);
			}
			// the late commands of nodes 4 and 5 (the acquire, then its release) have run
			await().atMost(Duration.ofSeconds(5))
				.until(() -> nodes.stream().noneMatch((node) -> RedlockNodes.has(node, "lockstep:invoice:7")));
			long later;
			// granted by nodes 3, 4, 5: only node 3 saw the earlier grant
			pause(nodes, 0, 1);
			try (LockHandle lock = second.acquire("invoice:7")) {
				later = lock.fencingToken();
			}
			finally {
				resume(nodes, 0, 1);
			}
			System.out.printf(
					"Redlock fencing, quorums {1,2,3} then {3,4,5}, node 1's counter ahead at %d: "
							+ "tokens %d then %d (node 3's counter %s, node 5's %s)%n",
					AHEAD, earlier, later, nodes.get(2).call("GET", "lockstep:__fence"),
					nodes.get(4).call("GET", "lockstep:__fence"));
			assertThat(earlier).isGreaterThan(AHEAD);
			assertThat(later).isGreaterThan(earlier);
		}
	}

	@Test
	void tokensIncreaseAcrossLeaseExpiryAndOwners(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 5);
		try (RedisLockTemplate locks = template(nodes); RedisLockTemplate other = template(nodes)) {
			long previous = 0;
			for (int i = 0; i < 20; i++) {
				try (LockHandle lock = locks.acquire("report")) {
					assertThat(lock.fencingToken()).isGreaterThan(previous);
					previous = lock.fencingToken();
				}
			}
			// a lease that expires without release, then the next owner (another client)
			LockHandle expiring = locks.withLeaseTime(Duration.ofMillis(300)).acquire("report");
			long expired = expiring.fencingToken();
			try (LockHandle next = other.acquire("report")) {
				assertThat(next.fencingToken()).isGreaterThan(expired).isGreaterThan(previous);
			}
			assertThatExceptionOfType(LockLostException.class).isThrownBy(expiring::close);
		}
	}

	private static RedisLockTemplate template(List<RedisNode> nodes) {
		return RedlockNodes.on(nodes)
			.nodeTimeout(Duration.ofMillis(200))
			.builder()
			.commandTimeout(Duration.ofMillis(500))
			.leaseTime(Duration.ofSeconds(3))
			.waitTime(Duration.ofSeconds(5))
			.build();
	}

	private static void pause(List<RedisNode> nodes, int... indexes) {
		for (int index : indexes) {
			nodes.get(index).pause();
		}
	}

	private static void resume(List<RedisNode> nodes, int... indexes) {
		for (int index : indexes) {
			nodes.get(index).resume();
		}
	}

}
