package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

/**
 * Shared helpers for the Redlock tests: masters that persist (as Redlock requires), the
 * URIs of nodes.
 */
final class RedlockNodes {

	/** redis-server options of a node that keeps its data across a restart. */
	static final String[] PERSISTENT = { "--appendonly", "yes" };

	private RedlockNodes() {
	}

	/** {@code count} masters with {@code appendonly yes}. */
	static List<RedisNode> persistent(RedisFixture fixture, int count) {
		return fixture.masters(count, PERSISTENT);
	}

	static List<RedisURI> uris(List<RedisNode> nodes) {
		return nodes.stream().map((node) -> RedisURI.create(node.host(), node.port())).toList();
	}

	/**
	 * Redlock on the nodes with a node timeout that leaves wide margins on a busy
	 * machine.
	 */
	static Redlock on(List<RedisNode> nodes) {
		return Redlock.nodes(uris(nodes)).nodeTimeout(Duration.ofMillis(500));
	}

	/** Whether the node has the key now. */
	static boolean has(RedisNode node, String key) {
		return (Long) node.call("EXISTS", key) == 1L;
	}

}
