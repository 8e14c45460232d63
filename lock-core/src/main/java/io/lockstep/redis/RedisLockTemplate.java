package io.lockstep.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockKeyException;
import io.lockstep.LockLostListener;
import io.lockstep.LockTemplate;

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

	private RedisLockTemplate(LockEngine engine, LockSettings settings) {
		this.engine = engine;
		this.settings = settings;
	}

	/**
	 * A builder on the Lettuce client of a {@link LettuceConnectionFactory} (standalone,
	 * Sentinel or Cluster).
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		Assert.notNull(connectionFactory, "'connectionFactory' must not be null");
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)) {
			throw new IllegalArgumentException("Lockstep needs a LettuceConnectionFactory (Lettuce is Spring Boot's "
					+ "default Redis client), got " + connectionFactory.getClass().getName());
		}
		AbstractRedisClient client = lettuce.getNativeClient();
		if (client == null) {
			throw new IllegalStateException("The LettuceConnectionFactory is not started yet");
		}
		return new Builder(client);
	}

	/**
	 * A builder on a Lettuce {@code RedisClient} or {@code RedisClusterClient}; the
	 * client stays yours to shut down.
	 */
	public static Builder builder(AbstractRedisClient client) {
		Assert.notNull(client, "'client' must not be null");
		return new Builder(client);
	}

	@Override
	public <T> T execute(String key, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		try (LockHandle lock = acquire(key)) {
			return callback.doInLock(lock);
		}
	}

	@Override
	public <T> T executeAll(Collection<String> keys, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		try (LockHandle lock = acquireAll(keys)) {
			return callback.doInLock(lock);
		}
	}

	@Override
	public <T> Optional<T> tryExecute(String key, LockCallback<T> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		Optional<LockHandle> acquired = tryAcquire(key);
		if (acquired.isEmpty()) {
			return Optional.empty();
		}
		try (LockHandle lock = acquired.get()) {
			return Optional.ofNullable(callback.doInLock(lock));
		}
	}

	@Override
	public LockHandle acquire(String key) {
		return acquire(List.of(redisKey(key)), this.settings.waitNanos(), true);
	}

	@Override
	public LockHandle acquireAll(Collection<String> keys) {
		return acquire(redisKeys(keys), this.settings.waitNanos(), true);
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
		if (key == null) {
			throw new LockKeyException("Lock key must not be null");
		}
		if (key.isBlank()) {
			throw new LockKeyException("Lock key must not be empty or blank, got '" + key + "'");
		}
		if (this.settings.name() == null && key.startsWith("__")) {
			throw new LockKeyException("Lock keys starting with '__' are reserved, got '" + key + "'");
		}
		String redisKey = this.settings.keyPrefix() + ((this.settings.name() != null) ? this.settings.name() + ":" : "")
				+ key;
		int bytes = redisKey.getBytes(StandardCharsets.UTF_8).length;
		if (bytes > MAX_KEY_BYTES) {
			throw new LockKeyException("Lock key is " + bytes + " bytes as a Redis key, over the limit of "
					+ MAX_KEY_BYTES + ": '" + redisKey.substring(0, 64) + "...'");
		}
		return redisKey;
	}

	private List<String> redisKeys(Collection<String> keys) {
		if (keys == null || keys.isEmpty()) {
			throw new LockKeyException("Lock keys must not be null or empty, got " + keys);
		}
		TreeSet<String> sorted = new TreeSet<>();
		for (String key : keys) {
			sorted.add(redisKey(key));
		}
		return new ArrayList<>(sorted);
	}

	/**
	 * Builds a {@link RedisLockTemplate}.
	 */
	public static final class Builder {

		private final AbstractRedisClient client;

		private String keyPrefix = "lockstep:";

		private Duration waitTime = Duration.ofSeconds(5);

		private Duration leaseTime = Duration.ofSeconds(30);

		private Duration maxHoldTime;

		private Duration commandTimeout = Duration.ofSeconds(2);

		private boolean interruptOnLeaseLost;

		private final List<LockLostListener> listeners = new ArrayList<>();

		private final Map<String, LockSettings.Override> overrides = new HashMap<>();

		// typed Object so that this class loads without Micrometer on the classpath
		private Object observationRegistry;

		private Object observationConvention;

		private Builder(AbstractRedisClient client) {
			this.client = client;
		}

		/** Prefix of every Redis key; default {@code lockstep:}. */
		public Builder keyPrefix(String keyPrefix) {
			Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
			Assert.isTrue(keyPrefix.length() <= 128, "'keyPrefix' must be at most 128 characters");
			this.keyPrefix = keyPrefix;
			return this;
		}

		/** Default wait for a lock; default 5s. */
		public Builder waitTime(Duration waitTime) {
			this.waitTime = LockSettings.checkWait(waitTime, "waitTime");
			return this;
		}

		/** Watchdog lease, renewed every third of it while held; default 30s. */
		public Builder leaseTime(Duration leaseTime) {
			this.leaseTime = LockSettings.checkLease(leaseTime, "leaseTime");
			return this;
		}

		/**
		 * Hard cap on renewal: no lease is renewed past this time after acquisition;
		 * default none.
		 */
		public Builder maxHoldTime(Duration maxHoldTime) {
			Assert.isTrue(maxHoldTime == null || (!maxHoldTime.isNegative() && !maxHoldTime.isZero()),
					"'maxHoldTime' must be positive");
			this.maxHoldTime = maxHoldTime;
			return this;
		}

		/**
		 * Bound on every Redis command of the lock; default 2s; keep it well below the
		 * lease.
		 */
		public Builder commandTimeout(Duration commandTimeout) {
			Assert.isTrue(commandTimeout != null && !commandTimeout.isNegative() && !commandTimeout.isZero(),
					"'commandTimeout' must be positive");
			Assert.isTrue(commandTimeout.toMillis() <= TimeUnit.MINUTES.toMillis(1),
					"'commandTimeout' must be at most 1 minute");
			this.commandTimeout = commandTimeout;
			return this;
		}

		/**
		 * Whether a lost lease also interrupts the holding thread; default false (notify
		 * only).
		 */
		public Builder interruptOnLeaseLost(boolean interrupt) {
			this.interruptOnLeaseLost = interrupt;
			return this;
		}

		/** Adds a listener told about every lost lease. */
		public Builder lockLostListener(LockLostListener listener) {
			Assert.notNull(listener, "'listener' must not be null");
			this.listeners.add(listener);
			return this;
		}

		/**
		 * Overrides the wait and the lease for the lock name used with
		 * {@link #named(String)} (or the annotation's name); {@code null} keeps the
		 * default.
		 */
		public Builder lockOverride(String name, Duration waitTime, Duration leaseTime) {
			Assert.hasText(name, "'name' must not be empty");
			Duration wait = (waitTime != null) ? LockSettings.checkWait(waitTime, "locks." + name + ".wait-time")
					: null;
			Duration lease = (leaseTime != null) ? LockSettings.checkLease(leaseTime, "locks." + name + ".lease-time")
					: null;
			this.overrides.put(name, new LockSettings.Override(wait, lease));
			return this;
		}

		/**
		 * Observes acquisitions ({@code lockstep.acquire}) and held locks
		 * ({@code lockstep.held}) through Micrometer; {@code convention} may be
		 * {@code null} for the default one. Needs
		 * {@code io.micrometer:micrometer-observation}.
		 */
		public Builder observationRegistry(io.micrometer.observation.ObservationRegistry registry,
				io.lockstep.observation.LockObservationConvention convention) {
			Assert.notNull(registry, "'registry' must not be null");
			this.observationRegistry = registry;
			this.observationConvention = convention;
			return this;
		}

		public RedisLockTemplate build() {
			if (this.commandTimeout.compareTo(this.leaseTime.dividedBy(3)) > 0) {
				throw new IllegalArgumentException("'commandTimeout' (" + this.commandTimeout
						+ ") must not exceed a third of 'leaseTime' (" + this.leaseTime + ")");
			}
			LockObservations observations = (this.observationRegistry != null)
					? new MicrometerLockObservations(
							(io.micrometer.observation.ObservationRegistry) this.observationRegistry,
							(io.lockstep.observation.LockObservationConvention) this.observationConvention)
					: LockObservations.NONE;
			LockEngine engine = new LockEngine(this.client, this.commandTimeout, this.keyPrefix, this.maxHoldTime,
					this.listeners, this.interruptOnLeaseLost, observations);
			return new RedisLockTemplate(engine, new LockSettings(this.keyPrefix, null, null, this.waitTime,
					this.leaseTime, false, Map.copyOf(this.overrides)));
		}

	}

}
