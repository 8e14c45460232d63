package io.lockstep.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.redlock.Redlock;

/**
 * Turns {@code lockstep.redlock.*} into a {@link Redlock}, failing start-up with a
 * message naming the property that is wrong.
 */
final class RedlockSettings {

	private static final String NODES_ACTION = "List at least 3 independent Redis masters (not Sentinel or Cluster "
			+ "nodes) in lockstep.redlock.nodes, each once, as redis://host:port URIs; or remove lockstep.redlock.nodes "
			+ "to lock on the single Redis of spring.data.redis.*.";

	private RedlockSettings() {
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
		double factor = properties.getClockDriftFactor();
		if (factor < 0 || factor > 0.5) {
			throw new LockConfigurationException(
					"lockstep.redlock.clock-drift-factor must be between 0 and 0.5, got " + factor,
					"Set lockstep.redlock.clock-drift-factor between 0 and 0.5, or remove it for the default 0.01.");
		}
		if (properties.getNodeTimeout() == null || properties.getNodeTimeout().isNegative()
				|| properties.getNodeTimeout().isZero()) {
			throw new LockConfigurationException(
					"lockstep.redlock.node-timeout must be positive, got " + properties.getNodeTimeout(),
					"Set lockstep.redlock.node-timeout to a positive duration such as 200ms (the default).");
		}
		try {
			return Redlock.nodes(nodes).clockDriftFactor(factor).nodeTimeout(properties.getNodeTimeout());
		}
		catch (IllegalArgumentException ex) {
			throw new LockConfigurationException("lockstep.redlock.nodes: " + ex.getMessage(), NODES_ACTION);
		}
	}

}
