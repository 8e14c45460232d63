package io.lockstep.redis;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.LockSettings;

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
public final class RedisLockTemplate implements LockTemplate, LockMonitor, AutoCloseable {

	/** The longest Redis key (prefix, name and key) accepted, in UTF-8 bytes. */
	public static final int MAX_KEY_BYTES = LockSettings.MAX_KEY_BYTES;

	private final EngineTemplate locks;

	static {
		EngineTemplate.register(RedisLockTemplate.class, (template) -> template.locks);
	}

	RedisLockTemplate(EngineTemplate locks) {
		this.locks = locks;
	}

	@Override
	public <R> R execute(String key, LockCallback<R> callback) {
		return this.locks.execute(key, callback);
	}

	@Override
	public <R> R executeAll(Collection<String> keys, LockCallback<R> callback) {
		return this.locks.executeAll(keys, callback);
	}

	@Override
	public <R> Optional<R> tryExecute(String key, LockCallback<R> callback) {
		return this.locks.tryExecute(key, callback);
	}

	@Override
	public LockHandle acquire(String key) {
		return this.locks.acquire(key);
	}

	@Override
	public LockHandle acquireAll(Collection<String> keys) {
		return this.locks.acquireAll(keys);
	}

	@Override
	public Optional<LockHandle> tryAcquire(String key) {
		return this.locks.tryAcquire(key);
	}

	@Override
	public Lock asLock(String key) {
		return this.locks.asLock(key);
	}

	@Override
	public boolean isLocked(String key) {
		return this.locks.isLocked(key);
	}

	@Override
	public RedisLockTemplate withWaitTime(Duration waitTime) {
		return new RedisLockTemplate(this.locks.withWaitTime(waitTime));
	}

	@Override
	public RedisLockTemplate withLeaseTime(Duration leaseTime) {
		return new RedisLockTemplate(this.locks.withLeaseTime(leaseTime));
	}

	@Override
	public RedisLockTemplate withMinHoldTime(Duration minHoldTime) {
		return new RedisLockTemplate(this.locks.withMinHoldTime(minHoldTime));
	}

	@Override
	public RedisLockTemplate named(String name) {
		return new RedisLockTemplate(this.locks.named(name));
	}

	@Override
	public RedisLockTemplate withLockName(String lockName) {
		return new RedisLockTemplate(this.locks.withLockName(lockName));
	}

	@Override
	public RedisLockTemplate read() {
		return new RedisLockTemplate(this.locks.read());
	}

	@Override
	public RedisLockTemplate write() {
		return new RedisLockTemplate(this.locks.write());
	}

	@Override
	public RedisLockTemplate withPermits(int permits) {
		return new RedisLockTemplate(this.locks.withPermits(permits));
	}

	@Override
	public List<LockInfo> heldLocks() {
		return this.locks.heldLocks();
	}

	@Override
	public String keyPrefix() {
		return this.locks.keyPrefix();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The key is resolved like {@link #isLocked(String)}: with this copy's name.
	 */
	@Override
	public Optional<Duration> leaseRemaining(String key) {
		return this.locks.leaseRemaining(key);
	}

	@Override
	public Duration ping() {
		return this.locks.ping();
	}

	@Override
	public long leasesLost() {
		return this.locks.leasesLost();
	}

	@Override
	public long releaseFailures() {
		return this.locks.releaseFailures();
	}

	@Override
	public boolean renewalsFailing() {
		return this.locks.renewalsFailing();
	}

	@Override
	public String lastRenewalFailure() {
		return this.locks.lastRenewalFailure();
	}

	@Override
	public boolean isDistributed() {
		return this.locks.isDistributed();
	}

	/**
	 * Closes what the template opened when this is the instance a builder returned: held
	 * leases stop being renewed and expire on their own. Does nothing on a copy.
	 */
	@Override
	public void close() {
		this.locks.close();
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

}
