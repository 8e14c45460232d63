package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redlock attempt that one node granted while another owner holds a quorum undoes
 * itself on every node; the acquisition's next attempt, under the same owner token, may
 * follow at once (the holder's release wakes it). On a node whose script cache is empty
 * (its first undo, a restart, {@code SCRIPT FLUSH}) the undo's script is refused
 * ({@code NOSCRIPT}) and sent again with its text, one round trip later, after what was
 * sent behind it. So the attempt reports only once the nodes that granted it ran the
 * undo.
 */
@RedisTest
class RedlockUndoOrderTests {

	private static final int ROUNDS = 100;

	@Test
	void anAttemptThatANodeGrantedHasBeenUndoneThereWhenItReturns(RedisFixture fixture) throws Exception {
		List<RedisNode> redis = RedlockNodes.persistent(fixture, 3);
		List<RedisClient> clients = new ArrayList<>();
		for (RedisNode node : redis) {
			clients.add(RedisClient.create(RedlockNodes.uris(List.of(node)).get(0)));
		}
		RedlockSettings settings = new RedlockSettings(0.01, Duration.ofMillis(500), true);
		try (Nodes all = new Nodes(List.of("a", "b", "c"), clients, Duration.ofSeconds(2), settings.nodeTimeout());
				Nodes others = new Nodes(List.of("b", "c"), clients.subList(1, 3), Duration.ofSeconds(2),
						settings.nodeTimeout())) {
			Acquisitions mine = new Acquisitions(all, "undo-order:__fence", settings, (lease) -> 0);
			Acquisitions holder = new Acquisitions(others, "undo-order:__fence", settings, (lease) -> 0);
			LockId id = LockId.of("undo-order:key");
			// another owner holds a quorum (nodes b and c); node a is free
			assertThat(holder.attempt(id, "holder", 60_000, Long.MAX_VALUE, 0).acquired()).isTrue();
			List<Integer> leftBehind = new ArrayList<>();
			for (int round = 0; round < ROUNDS; round++) {
				for (RedisNode node : redis) {
					node.call("SCRIPT", "FLUSH");
				}
				Attempt attempt = mine.attempt(id, "mine-" + round, 60_000, Long.MAX_VALUE, 0);
				assertThat(attempt.acquired()).isFalse();
				// asked at once on node a's own connection, behind the undo
				long ttl = all.get(0).pttl("undo-order:key", Duration.ofSeconds(2)).get(5, TimeUnit.SECONDS);
				if (ttl >= 0) {
					leftBehind.add(round);
				}
			}
			System.out.printf("Redlock attempts granted by 1 of 3 nodes without scripts (%s): still held on that "
					+ "node in rounds %s of %d%n", redis.get(0).server(), leftBehind, ROUNDS);
			assertThat(leftBehind).as("rounds in which node a still held the key after the attempt returned").isEmpty();
		}
		finally {
			clients.forEach(RedisClient::shutdown);
		}
	}

}
