package io.lockstep.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.AbstractLockTemplate;
import io.lockstep.internal.engine.LockEngine;
import io.lockstep.internal.engine.LockSettings;
import io.lockstep.internal.redis.RedisBackendFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.Assert;

/**
 * {@link LockTemplate} on one Redis master (standalone, or the master Sentinel points to)
 * through Lettuce. Build one with {@link #builder(RedisConnectionFactory)};
 * {@link #withWaitTime}, {@link #withLeaseTime} and {@link #named} return views that
 * share its connections, watchdog and waiters. {@link #close()} on the built instance
 * shuts them down; closing a view does nothing.
 *
 * <p>
 * Redis data: the lock key {@code <key-prefix>[<name>:]<key>} holds
 * {@code "<owner token>:<fencing token>:<max-hold cap>"} with the lease as its TTL; one
 * counter {@code <key-prefix>__fence} (no TTL) issues the fencing tokens. Keys and names
 * starting with {@code "__"} are reserved. A Redis key may be at most
 * {@value #MAX_KEY_BYTES} bytes of UTF-8.
 *
 * <p>
 * Not safe: with asynchronous replication, a failover can lose a lock that the old master
 * granted (another owner may then acquire it); use fencing tokens where that matters.
 */
public final class RedisLockTemplate extends AbstractLockTemplate<RedisLockTemplate> {

	/** The longest Redis key (prefix, name and key) accepted, in UTF-8 bytes. */
	public static final int MAX_KEY_BYTES = LockSettings.MAX_KEY_BYTES;

	RedisLockTemplate(LockEngine engine, LockSettings settings, boolean owner) {
		super(engine, settings, owner);
	}

	/**
	 * A builder on the Lettuce client of a {@link LettuceConnectionFactory} (standalone,
	 * Sentinel or Cluster).
	 */
	public static RedisLockTemplateBuilder builder(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalArgumentException("Lockstep needs a LettuceConnectionFactory (Lettuce is Spring Boot's "
					+ "default Redis client), got " + connectionFactory.getClass().getName());
		}
		AbstractRedisClient client = lettuce.getNativeClient();
		if (client == null) {
			throw new IllegalStateException("The LettuceConnectionFactory is not started yet");
		}
		return new RedisLockTemplateBuilder(client);
	}

	/**
	 * A builder on a Lettuce {@code RedisClient} or {@code RedisClusterClient}; the
	 * client stays yours to shut down.
	 */
	public static RedisLockTemplateBuilder builder(AbstractRedisClient client) {
		Assert.notNull(client, "'client' must not be null");
		return new RedisLockTemplateBuilder(client);
	}

	/**
	 * A builder on a backend of Lockstep's own (Cluster, Redlock); not for applications.
	 */
	public static RedisLockTemplateBuilder builder(RedisBackendFactory backend) {
		Assert.notNull(backend, "'backend' must not be null");
		return new RedisLockTemplateBuilder(backend);
	}

	@Override
	protected RedisLockTemplate copy(LockEngine engine, LockSettings settings) {
		return new RedisLockTemplate(engine, settings, false);
	}

	@Override
	public boolean isDistributed() {
		return true;
	}

}
