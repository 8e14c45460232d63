package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.cluster.ClusterLocks;
import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.redis.RedisBackendFactory;
import io.lockstep.internal.engine.AbstractLockTemplateBuilder;
import io.lockstep.internal.engine.LockSettings;

import org.springframework.util.Assert;

/**
 * Builds a {@link RedisLockTemplate}.
 */
public final class RedisLockTemplateBuilder
		extends AbstractLockTemplateBuilder<RedisLockTemplateBuilder, RedisLockTemplate> {

	private final RedisBackendFactory backend;

	private Duration commandTimeout = Duration.ofSeconds(2);

	private final boolean cluster;

	private int replicaAcks;

	private Duration replicaAckTimeout = Duration.ofMillis(100);

	RedisLockTemplateBuilder(AbstractRedisClient client) {
		this.cluster = client instanceof RedisClusterClient;
		this.backend = (client instanceof RedisClusterClient cluster) ? ClusterLocks.backend(cluster) : (timeout,
				prefix) -> new RedisBackend(client, timeout, prefix, this.replicaAcks, this.replicaAckTimeout);
	}

	RedisLockTemplateBuilder(RedisBackendFactory backend) {
		this.cluster = false;
		this.backend = backend;
	}

	@Override
	protected RedisLockTemplateBuilder self() {
		return this;
	}

	/**
	 * Requires {@code replicas} replicas to acknowledge every acquisition ({@code WAIT})
	 * within {@code timeout}, else the acquisition is undone and fails at once (a wait is
	 * spent only on a lock held by another owner); 0 (the default) checks nothing.
	 * Narrows, but does not close, the window in which a failover loses a lock (single
	 * master and Sentinel).
	 */
	public RedisLockTemplateBuilder replicaAcknowledgements(int replicas, Duration timeout) {
		Assert.isTrue(replicas >= 0, "'replicas' must not be negative");
		Assert.isTrue(replicas == 0 || !this.cluster,
				"Replica acknowledgements (lockstep.replication.acknowledgements) are checked on a single master "
						+ "or behind Sentinel, not on a Redis Cluster");
		Assert.isTrue(timeout != null && !timeout.isNegative() && !timeout.isZero(), "'timeout' must be positive");
		this.replicaAcks = replicas;
		this.replicaAckTimeout = timeout;
		return this;
	}

	/**
	 * Bound on every Redis command of the lock; default 2s; at most a third of every
	 * lease (the default one and each per-name one), so that a renewal can time out and
	 * be retried before the lease runs out.
	 */
	public RedisLockTemplateBuilder commandTimeout(Duration commandTimeout) {
		Assert.isTrue(commandTimeout != null && !commandTimeout.isNegative() && !commandTimeout.isZero(),
				"'commandTimeout' must be positive");
		Assert.isTrue(commandTimeout.toMillis() <= TimeUnit.MINUTES.toMillis(1),
				"'commandTimeout' must be at most 1 minute");
		this.commandTimeout = commandTimeout;
		return this;
	}

	/**
	 * @throws IllegalArgumentException if the command timeout exceeds a third of a lease,
	 * or a per-name minimum hold exceeds the max-hold cap
	 */
	@Override
	public RedisLockTemplate build() {
		leases().forEach((property, lease) -> {
			if (this.commandTimeout.compareTo(lease.dividedBy(3)) > 0) {
				throw new IllegalArgumentException("'commandTimeout' (" + DurationFormat.format(this.commandTimeout)
						+ ") must not exceed a third of '" + property + "' (" + DurationFormat.format(lease) + ")");
			}
		});
		LockSettings settings = settings();
		return new RedisLockTemplate(engine(this.backend.create(this.commandTimeout, keyPrefix())), settings, true);
	}

}
