package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redlock attempt that no quorum granted is undone on every node while the acquisition
 * goes on under the same owner token. A script a node does not have cached
 * ({@code NOSCRIPT}: its first run there, a restart, {@code SCRIPT FLUSH}) is sent again
 * with its text one round trip later, after what was sent behind it. Neither the undo nor
 * the attempt may run out of order that way: the undo must not undo the owner's next
 * attempt, and the attempt must not run again after its undo.
 */
@RedisTest
class RedlockUndoOrderTests {

	private static final String KEY = "undo-order:key";

	private final List<RedisClient> clients = new ArrayList<>();

	private List<RedisNode> redis;

	private Nodes all;

	private Nodes others;

	private Acquisitions mine;

	private Acquisitions holder;

	@BeforeEach
	void start(RedisFixture fixture) {
		this.redis = RedlockNodes.persistent(fixture, 3);
		for (RedisNode node : this.redis) {
			this.clients.add(RedisClient.create(RedlockNodes.uris(List.of(node)).get(0)));
		}
		RedlockSettings settings = new RedlockSettings(0.01, Duration.ofMillis(500), true);
		this.all = new Nodes(List.of("a", "b", "c"), this.clients, Duration.ofSeconds(2), settings.nodeTimeout());
		this.others = new Nodes(List.of("b", "c"), this.clients.subList(1, 3), Duration.ofSeconds(2),
				settings.nodeTimeout());
		this.mine = new Acquisitions(this.all, "undo-order:__fence", settings, (lease) -> 0);
		this.holder = new Acquisitions(this.others, "undo-order:__fence", settings, (lease) -> 0);
	}

	@AfterEach
	void stop() {
		this.all.close();
		this.others.close();
		this.clients.forEach(RedisClient::shutdown);
	}

	/**
	 * Node a is paused while the attempt runs, so the attempt is decided without it
	 * (another owner holds b and c) and its undo waits there behind it; node b is then
	 * freed and the same owner tries again at once: granted by a and b, and a keeps it.
	 * Node a has every script cached but the undo's.
	 */
	@Test
	void anUndoNeverUndoesTheSameOwnersNextAttempt() throws Exception {
		LockId id = LockId.of(KEY);
		List<String> lost = new ArrayList<>();
		for (int round = 0; round < 10; round++) {
			assertThat(this.holder.attempt(id, "holder", 60_000, Long.MAX_VALUE, 0).acquired()).isTrue();
			for (RedisNode node : this.redis) {
				node.call("SCRIPT", "FLUSH");
				node.call("SCRIPT", "LOAD", LockScripts.ACQUIRE_ALL.getScriptAsString());
				node.call("SCRIPT", "LOAD", LockScripts.RAISE_FENCE.getScriptAsString());
			}
			this.redis.get(0).call("CLIENT", "PAUSE", "100", "ALL");
			String owner = "mine-" + round;
			assertThat(this.mine.attempt(id, owner, 60_000, Long.MAX_VALUE, 0).acquired()).isFalse();
			this.redis.get(1).call("DEL", KEY);
			Attempt next = this.mine.attempt(id, owner, 60_000, Long.MAX_VALUE, 0);
			long ttl = next.acquired() ? pttlOnNodeA() : -2;
			if (!next.acquired() || ttl < 0) {
				lost.add("round " + round + ": " + (next.acquired() ? "node a lost it" : "not acquired"));
			}
			this.mine.undo(id, owner).get(5, TimeUnit.SECONDS);
		}
		System.out.printf("Redlock: the same owner's next attempt after an undo refused NOSCRIPT on a paused node "
				+ "(%s): %d of 10 undone or refused %s%n", this.redis.get(0).server(), lost.size(), lost);
		assertThat(lost).isEmpty();
	}

	/**
	 * Node a is paused while the attempt runs, so the attempt is decided without it; its
	 * attempt there is refused NOSCRIPT (only the undo's script is cached), and must not
	 * be sent again after the undo.
	 */
	@Test
	void anAttemptIsNotSentAgainAfterItsUndo() throws Exception {
		LockId id = LockId.of(KEY);
		assertThat(this.holder.attempt(id, "holder", 60_000, Long.MAX_VALUE, 0).acquired()).isTrue();
		List<Integer> leftBehind = new ArrayList<>();
		for (int round = 0; round < 10; round++) {
			this.redis.get(0).call("SCRIPT", "FLUSH");
			this.redis.get(0).call("SCRIPT", "LOAD", LockScripts.DELETE.getScriptAsString());
			this.redis.get(0).call("CLIENT", "PAUSE", "30", "ALL");
			assertThat(this.mine.attempt(id, "mine-" + round, 60_000, Long.MAX_VALUE, 0).acquired()).isFalse();
			// the first reply comes after the attempt's NOSCRIPT, so the second is asked
			// after any retry of it
			pttlOnNodeA();
			if (pttlOnNodeA() >= 0) {
				leftBehind.add(round);
				this.redis.get(0).call("DEL", KEY);
			}
		}
		System.out.printf(
				"Redlock: attempts refused NOSCRIPT on a paused node (%s) that ran after their undo: " + "%s of 10%n",
				this.redis.get(0).server(), leftBehind);
		assertThat(leftBehind).isEmpty();
	}

	/** The key's remaining lease on node a, asked on the node's own connection. */
	private long pttlOnNodeA() throws Exception {
		return this.all.get(0).pttl(KEY, Duration.ofSeconds(2)).get(5, TimeUnit.SECONDS);
	}

}
