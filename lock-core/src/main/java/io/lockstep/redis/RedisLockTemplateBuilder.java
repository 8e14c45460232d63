package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockLostListener;

import org.springframework.util.Assert;

/**
 * Builds a {@link RedisLockTemplate}.
 */
public final class RedisLockTemplateBuilder {

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

	RedisLockTemplateBuilder(AbstractRedisClient client) {
		this.client = client;
	}

	/** Prefix of every Redis key; default {@code lockstep:}. */
	public RedisLockTemplateBuilder keyPrefix(String keyPrefix) {
		Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
		Assert.isTrue(keyPrefix.length() <= 128, "'keyPrefix' must be at most 128 characters");
		this.keyPrefix = keyPrefix;
		return this;
	}

	/** Default wait for a lock; default 5s. */
	public RedisLockTemplateBuilder waitTime(Duration waitTime) {
		this.waitTime = LockSettings.checkWait(waitTime, "waitTime");
		return this;
	}

	/** Watchdog lease, renewed every third of it while held; default 30s. */
	public RedisLockTemplateBuilder leaseTime(Duration leaseTime) {
		this.leaseTime = LockSettings.checkLease(leaseTime, "leaseTime");
		return this;
	}

	/**
	 * Hard cap on renewal: no lease is renewed past this time after acquisition; default
	 * none.
	 */
	public RedisLockTemplateBuilder maxHoldTime(Duration maxHoldTime) {
		Assert.isTrue(maxHoldTime == null || (!maxHoldTime.isNegative() && !maxHoldTime.isZero()),
				"'maxHoldTime' must be positive");
		this.maxHoldTime = maxHoldTime;
		return this;
	}

	/**
	 * Bound on every Redis command of the lock; default 2s; keep it well below the lease.
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
	 * Whether a lost lease also interrupts the holding thread; default false (notify
	 * only).
	 */
	public RedisLockTemplateBuilder interruptOnLeaseLost(boolean interrupt) {
		this.interruptOnLeaseLost = interrupt;
		return this;
	}

	/** Adds a listener told about every lost lease. */
	public RedisLockTemplateBuilder lockLostListener(LockLostListener listener) {
		Assert.notNull(listener, "'listener' must not be null");
		this.listeners.add(listener);
		return this;
	}

	/**
	 * Overrides the wait and the lease for the lock name used with {@link #named(String)}
	 * (or the annotation's name); {@code null} keeps the default.
	 */
	public RedisLockTemplateBuilder lockOverride(String name, Duration waitTime, Duration leaseTime) {
		Assert.hasText(name, "'name' must not be empty");
		Duration wait = (waitTime != null) ? LockSettings.checkWait(waitTime, "locks." + name + ".wait-time") : null;
		Duration lease = (leaseTime != null) ? LockSettings.checkLease(leaseTime, "locks." + name + ".lease-time")
				: null;
		this.overrides.put(name, new LockSettings.Override(wait, lease));
		return this;
	}

	/**
	 * Observes acquisitions ({@code lockstep.acquire}) and held locks
	 * ({@code lockstep.held}) through Micrometer; {@code convention} may be {@code null}
	 * for the default one. Needs {@code io.micrometer:micrometer-observation}.
	 */
	public RedisLockTemplateBuilder observationRegistry(io.micrometer.observation.ObservationRegistry registry,
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
		return new RedisLockTemplate(engine, new LockSettings(this.keyPrefix, null, null, this.waitTime, this.leaseTime,
				false, Map.copyOf(this.overrides)));
	}

}
