package io.lockstep.cluster;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.CRC16;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Cluster;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A blocking acquisition of a multi-slot lock on a Cluster that is interrupted while its
 * attempt is on its way: the attempt is undone, all of it (no later slot's script is sent
 * after the undo).
 */
@RedisTest
class ClusterInterruptTests {

	@Test
	void anInterruptedMultiSlotAcquisitionLeavesNoSlotTaken(RedisFixture fixture) throws Exception {
		Cluster cluster = fixture.cluster(3, 0);
		RedisClusterClient client = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(0).port()));
		List<String> keys = List.of("m1", "m2", "m3", "m4");
		Set<Integer> slots = new HashSet<>();
		keys.forEach((key) -> slots.add(CRC16.crc16(("lockstep:" + key).getBytes(StandardCharsets.UTF_8)) & 16383));
		assertThat(slots).as("the keys fall in several slots").hasSizeGreaterThan(1);
		try (RedisLockTemplate locks = RedisLockTemplate.builder(client)
			.leaseTime(Duration.ofSeconds(60))
			.commandTimeout(Duration.ofSeconds(5))
			.build()) {
			// connected, scripts loaded
			locks.acquireAll(keys).close();
			List<RedisClient> nodes = cluster.masters()
				.stream()
				.map((node) -> RedisClient.create(RedisURI.create("127.0.0.1", node.port())))
				.toList();
			try {
				AtomicReference<Throwable> thrown = new AtomicReference<>();
				CountDownLatch ended = new CountDownLatch(1);
				// every master holds its clients' commands for a second: the attempt's
				// first
				// script waits in Redis while the caller is interrupted
				nodes.forEach((node) -> {
					try (var connection = node.connect()) {
						connection.sync().clientPause(1000);
					}
				});
				Thread caller = new Thread(() -> {
					try {
						locks.acquireAll(keys).close();
					}
					catch (Throwable ex) {
						thrown.set(ex);
					}
					finally {
						ended.countDown();
					}
				});
				caller.start();
				// parked (at most the command timeout) until the paused master
				// answers its first script
				await().atMost(Duration.ofMillis(800))
					.until(() -> caller.getState() == Thread.State.WAITING
							|| caller.getState() == Thread.State.TIMED_WAITING);
				caller.interrupt();
				assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
				assertThat(thrown.get()).as("the interrupted caller's failure").isInstanceOf(LockException.class);
				// the pause ends within a second; the attempt's later scripts then run
				boolean free = Eventually.holds(Duration.ofSeconds(5), () -> keys.stream().noneMatch(locks::isLocked));
				assertThat(keys.stream().filter(locks::isLocked).toList()).as("keys left taken, free=" + free)
					.isEmpty();
			}
			finally {
				nodes.forEach(RedisClient::shutdown);
			}
		}
		finally {
			client.shutdown();
		}
	}

}
