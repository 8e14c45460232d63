package io.lockstep.redis;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockTemplate;
import io.lockstep.internal.transaction.LockRelease;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.Assert;

/**
 * {@link LockTemplate} on Redis through Lettuce. Build one with
 * {@link #builder(RedisConnectionFactory)}; {@link #withWaitTime}, {@link #withLeaseTime}
 * and {@link #named} return cheap copies that share its connections, watchdog and
 * waiters. {@link #close()} (on any copy) shuts them down.
 *
 * <p>
 * Redis data: the lock key {@code <key-prefix>[<name>:]<key>} holds
 * {@code "<owner token>:<fencing token>"} with the lease as its TTL; one counter
 * {@code <key-prefix>__fence} (no TTL) issues the fencing tokens. Keys and names starting
 * with {@code "__"} are reserved. A Redis key may be at most {@value #MAX_KEY_BYTES}
 * bytes of UTF-8.
 */
public final class RedisLockTemplate implements LockTemplate, AutoCloseable {

	/** The longest Redis key (prefix, name and key) accepted, in UTF-8 bytes. */
	public static final int MAX_KEY_BYTES = 1024;

	private final LockEngine engine;

	private final LockSettings settings;

	RedisLockTemplate(LockEngine engine, LockSettings settings) {
		this.engine = engine;
		this.settings = settings;
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

	@Override
	public <T> T execute(String key, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		return run(acquire(key), callback);
	}

	@Override
	public <T> T executeAll(Collection<String> keys, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		return run(acquireAll(keys), callback);
	}

	@Override
	public <T> Optional<T> tryExecute(String key, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		Optional<LockHandle> acquired = tryAcquire(key);
		return acquired.map((lock) -> run(lock, callback));
	}

	/**
	 * Runs the callback and releases the lock after it, or, inside a Spring transaction,
	 * after that transaction completes (confirming the lock before it commits).
	 */
	private <T> T run(LockHandle lock, LockCallback<T> callback) {
		LockRelease release = LockRelease.bind(lock);
		Throwable failure = null;
		try {
			return callback.doInLock(lock);
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			release.arrive(failure);
		}
	}

	@Override
	public LockHandle acquire(String key) {
		return acquire(List.of(redisKey(key)), this.settings.waitNanos(), true);
	}

	@Override
	public LockHandle acquireAll(Collection<String> keys) {
		return acquire(this.settings.redisKeys(keys), this.settings.waitNanos(), true);
	}

	@Override
	public Optional<LockHandle> tryAcquire(String key) {
		return Optional.ofNullable(acquire(List.of(redisKey(key)), 0, false));
	}

	@Override
	public boolean isLocked(String key) {
		return this.engine.exists(redisKey(key));
	}

	@Override
	public RedisLockTemplate withWaitTime(Duration waitTime) {
		return new RedisLockTemplate(this.engine, this.settings.withWaitTime(waitTime));
	}

	@Override
	public RedisLockTemplate withLeaseTime(Duration leaseTime) {
		return new RedisLockTemplate(this.engine, this.settings.withLeaseTime(leaseTime));
	}

	@Override
	public RedisLockTemplate named(String name) {
		return new RedisLockTemplate(this.engine, this.settings.named(name));
	}

	@Override
	public RedisLockTemplate withLockName(String lockName) {
		return new RedisLockTemplate(this.engine, this.settings.withLockName(lockName));
	}

	/** The locks this instance holds now (through any copy of this template). */
	public List<LockInfo> heldLocks() {
		return this.engine.heldLocks();
	}

	/**
	 * The remaining lease of the key in Redis, held by any owner in any process, or empty
	 * when nobody holds it. The key is resolved like {@link #isLocked(String)}.
	 */
	public Optional<Duration> remainingLease(String key) {
		long millis = this.engine.pttl(redisKey(key));
		return (millis >= 0) ? Optional.of(Duration.ofMillis(millis)) : Optional.empty();
	}

	/** Whether the latest lease renewal failed to reach Redis (health turns DOWN). */
	public boolean renewalsFailing() {
		return this.engine.watchdog().renewalsFailing();
	}

	/** The latest renewal failure, or {@code null}. */
	public String lastRenewalFailure() {
		return this.engine.watchdog().lastFailure();
	}

	/** The number of leases lost since start. */
	public long leasesLost() {
		return this.engine.leasesLost();
	}

	/**
	 * Shuts down the shared connections, watchdog and waiters; held leases then expire on
	 * their own.
	 */
	@Override
	public void close() {
		this.engine.close();
	}

	LockEngine engine() {
		return this.engine;
	}

	private LockHandle acquire(List<String> keys, long waitNanos, boolean throwOnTimeout) {
		Duration lease = this.settings.leaseTime();
		return this.engine.acquire(keys, this.settings.lockName(), waitNanos, lease.toNanos(),
				!this.settings.fixedLease(), throwOnTimeout);
	}

	String redisKey(String key) {
		return this.settings.redisKey(key);
	}

}
