package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import io.lockstep.LockHandle;
import io.lockstep.redis.LockWorker;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lock delay on Redlock: a holder JVM killed without a release leaves the key unavailable
 * on every node for the delay after its lease; another JVM gets it no earlier than that.
 */
@RedisTest
class RedlockLockDelayTests {

	private static final long LEASE_MILLIS = 1_000;

	private static final long DELAY_MILLIS = 2_000;

	@Test
	void aKilledHoldersKeyStaysUnavailableOnEveryNodeForTheDelayAfterItsLease(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		String ports = nodes.stream().map((node) -> Integer.toString(node.port())).collect(Collectors.joining(","));
		try (WorkerJvm holder = new WorkerJvm(LockWorker.class, "hold-redlock", ports, "delay:redlock",
				Long.toString(LEASE_MILLIS), Long.toString(DELAY_MILLIS));
				RedisLockTemplate locks = RedlockNodes.on(nodes).builder().waitTime(Duration.ofSeconds(15)).build()) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			holder.kill();
			List<Long> pttls = nodes.stream()
				.map((node) -> (Long) node.call("PTTL", "lockstep:delay:redlock"))
				.toList();
			long from = System.nanoTime();
			try (LockHandle lock = locks.acquire("delay:redlock")) {
				long waitedMillis = (System.nanoTime() - from) / 1_000_000;
				long shortest = pttls.stream().mapToLong(Long::longValue).min().orElseThrow();
				System.out.printf(
						"Redlock holder JVM SIGKILLed (lease %d ms, lock delay %d ms): the key lived %s ms "
								+ "more on the nodes; the next holder got in after %d ms%n",
						LEASE_MILLIS, DELAY_MILLIS, pttls, waitedMillis);
				assertThat(pttls).allSatisfy((pttl) -> assertThat(pttl).isGreaterThan(DELAY_MILLIS));
				// a quorum (2 of 3) must be free: no earlier than the second-shortest
				// expiry
				assertThat(waitedMillis).isBetween(shortest - 100,
						pttls.stream().mapToLong(Long::longValue).max().orElseThrow() + 2_000);
			}
		}
	}

}
