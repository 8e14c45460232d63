package io.lockstep.cluster;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.internal.redis.RedisBackendFactory;

/**
 * The Redis Cluster backend's entry point for the Redis template builder; not for
 * applications, which get it by building a template on a Cluster connection factory or
 * client.
 */
public final class ClusterLocks {

	private ClusterLocks() {
	}

	/** The backend on a Cluster client; the client stays the caller's to shut down. */
	public static RedisBackendFactory backend(RedisClusterClient client) {
		return (commandTimeout, keyPrefix) -> new ClusterBackend(client, commandTimeout, keyPrefix);
	}

}
