package io.lockstep.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.redlock.Redlock;

/**
 * Turns {@code lockstep.redlock.*} into a {@link Redlock}, failing start-up with a
 * message naming the property that is wrong (the ranges of the clock-drift factor and the
 * node timeout are checked when the properties are bound, see {@link PropertyValues}).
 */
final class RedlockFactory {

	private static final String NODES_ACTION = "List at least 3 independent Redis masters (not Sentinel or Cluster "
			+ "nodes) in lockstep.redlock.nodes, each once, as redis://host:port URIs; or remove lockstep.redlock.nodes "
			+ "to lock on the single Redis of spring.data.redis.*.";

	private RedlockFactory() {
	}

	static Redlock redlock(LockstepProperties.Redlock properties) {
		List<String> values = properties.getNodes();
		if (values.size() < 3) {
			throw new LockConfigurationException(
					"lockstep.redlock.nodes must list at least 3 independent Redis masters "
							+ "for Redlock (quorum N/2+1), got " + values.size() + ": " + values,
					NODES_ACTION);
		}
		List<RedisURI> nodes = new ArrayList<>();
		for (int i = 0; i < values.size(); i++) {
			String value = values.get(i);
			try {
				nodes.add(RedisURI.create(value.trim()));
			}
			catch (RuntimeException ex) {
				throw new LockConfigurationException("lockstep.redlock.nodes[" + i
						+ "] is not a Redis URI (redis://host:port): '" + value + "' (" + ex.getMessage() + ")",
						NODES_ACTION);
			}
		}
		try {
			return Redlock.nodes(nodes)
				.clockDriftFactor(properties.getClockDriftFactor())
				.nodeTimeout(properties.getNodeTimeout());
		}
		catch (IllegalArgumentException ex) {
			throw new LockConfigurationException("lockstep.redlock.nodes: " + ex.getMessage(), NODES_ACTION);
		}
	}

}
