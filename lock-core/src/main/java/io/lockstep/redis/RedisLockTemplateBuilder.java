package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.LockLostListener;
import io.lockstep.LockTemplateBuilder;
import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.LockSettings;
import io.lockstep.internal.engine.TemplateOptions;
import io.lockstep.internal.redis.ClusterLayout;
import io.lockstep.internal.redis.KeyLayout;
import io.lockstep.internal.redis.RedisStore;
import io.lockstep.internal.redis.TemplateBuilders;
import io.lockstep.internal.redis.TemplateBuilders.StorageFactory;
import io.lockstep.observation.LockObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Builds a {@link RedisLockTemplate}.
 */
public final class RedisLockTemplateBuilder
		implements LockTemplateBuilder<RedisLockTemplateBuilder, RedisLockTemplate> {

	static {
		TemplateBuilders.register(RedisLockTemplateBuilder.class, RedisLockTemplateBuilder::new);
	}

	private final TemplateOptions options = new TemplateOptions();

	private final StorageFactory storage;

	private Duration commandTimeout = Duration.ofSeconds(2);

	private final boolean cluster;

	private int replicaAcks;

	private Duration replicaAckTimeout = Duration.ofMillis(100);

	RedisLockTemplateBuilder(AbstractRedisClient client) {
		this.cluster = client instanceof RedisClusterClient;
		this.storage = (timeout, prefix) -> RedisStore.create(client, timeout,
				this.cluster ? new ClusterLayout(prefix) : KeyLayout.singleMaster(prefix), this.replicaAcks,
				this.replicaAckTimeout);
	}

	/** On a store of Lockstep's own (Redlock). */
	private RedisLockTemplateBuilder(StorageFactory storage) {
		this.cluster = false;
		this.storage = storage;
	}

	@Override
	public RedisLockTemplateBuilder keyPrefix(String keyPrefix) {
		this.options.keyPrefix(keyPrefix);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder waitTime(Duration waitTime) {
		this.options.waitTime(waitTime);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder leaseTime(Duration leaseTime) {
		this.options.leaseTime(leaseTime);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder maxHoldTime(@Nullable Duration maxHoldTime) {
		this.options.maxHoldTime(maxHoldTime);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder interruptOnLeaseLost(boolean interrupt) {
		this.options.interruptOnLeaseLost(interrupt);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder virtualThreads(boolean virtual) {
		this.options.virtualThreads(virtual);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder lockLostListener(LockLostListener listener) {
		this.options.lockLostListener(listener);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder lockOverride(String name, @Nullable Duration waitTime,
			@Nullable Duration leaseTime) {
		this.options.lockOverride(name, waitTime, leaseTime);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder lockDelay(Duration lockDelay) {
		this.options.lockDelay(lockDelay);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder lockDelay(String name, Duration lockDelay) {
		this.options.lockDelay(name, lockDelay);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder lockOverride(String name, @Nullable Duration waitTime, @Nullable Duration leaseTime,
			@Nullable Duration minHoldTime) {
		this.options.lockOverride(name, waitTime, leaseTime, minHoldTime);
		return this;
	}

	@Override
	public RedisLockTemplateBuilder observationRegistry(ObservationRegistry registry,
			@Nullable LockObservationConvention convention) {
		this.options.observationRegistry(registry, convention);
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
	 * {@inheritDoc}
	 * @throws IllegalArgumentException if the command timeout exceeds a third of a lease,
	 * or a per-name minimum hold exceeds the max-hold cap
	 */
	@Override
	public RedisLockTemplate build() {
		this.options.leases().forEach((property, lease) -> {
			if (this.commandTimeout.compareTo(lease.dividedBy(3)) > 0) {
				throw new IllegalArgumentException("'commandTimeout' (" + DurationFormat.format(this.commandTimeout)
						+ ") must not exceed a third of '" + property + "' (" + DurationFormat.format(lease) + ")");
			}
		});
		LockSettings settings = this.options.settings();
		return new RedisLockTemplate(new EngineTemplate(
				this.options.engine(this.storage.create(this.commandTimeout, this.options.keyPrefix())), settings,
				true));
	}

}
