package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lockstep.LockLostListener;
import io.lockstep.observation.LockObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.util.Assert;

/**
 * The settings every lock template builder shares, whatever the store; each public
 * builder keeps one and hands its settings on (their documentation is on the public
 * builders).
 */
public final class TemplateOptions {

	private String keyPrefix = "lockstep:";

	private Duration waitTime = Duration.ofSeconds(5);

	private Duration leaseTime = Duration.ofSeconds(30);

	private Duration lockDelay = Duration.ZERO;

	private Duration maxHoldTime;

	private boolean interruptOnLeaseLost;

	private boolean virtualThreads;

	private final List<LockLostListener> listeners = new ArrayList<>();

	private final Map<String, LockSettings.Override> overrides = new LinkedHashMap<>();

	private ObservationRegistry observationRegistry;

	private LockObservationConvention observationConvention;

	/** Prefix of every key; default {@code lockstep:}. */
	public void keyPrefix(String keyPrefix) {
		Assert.notNull(keyPrefix, "'keyPrefix' must not be null");
		Assert.isTrue(keyPrefix.length() <= 128, "'keyPrefix' must be at most 128 characters");
		this.keyPrefix = keyPrefix;
	}

	/** Default wait for a lock; default 5s. */
	public void waitTime(Duration waitTime) {
		this.waitTime = LockSettings.checkWait(waitTime, "waitTime");
	}

	/** Watchdog lease, renewed every third of it while held; default 30s. */
	public void leaseTime(Duration leaseTime) {
		this.leaseTime = LockSettings.checkLease(leaseTime, "leaseTime");
	}

	/**
	 * Hard cap on every hold: a key never outlives acquisition + this (the first lease is
	 * capped too), and {@code isHeld()} turns false by then; default none.
	 */
	public void maxHoldTime(Duration maxHoldTime) {
		Assert.isTrue(maxHoldTime == null || (!maxHoldTime.isNegative() && !maxHoldTime.isZero()),
				"'maxHoldTime' must be positive");
		this.maxHoldTime = maxHoldTime;
	}

	/**
	 * Whether a lost lease also interrupts the calls guarded by it (only while they run);
	 * default false (notify only).
	 */
	public void interruptOnLeaseLost(boolean interrupt) {
		this.interruptOnLeaseLost = interrupt;
	}

	/**
	 * Whether the threads the library starts for work that may block run as virtual
	 * threads: the workers of asynchronous (reactive) acquisitions and the thread that
	 * tells the lock-lost listeners. Default {@code false}; the auto-configuration
	 * follows {@code spring.threads.virtual.enabled}. The watchdog and the timers stay on
	 * platform threads (their tasks never block, and must run on time).
	 * @throws IllegalStateException on a JDK without virtual threads (before 21)
	 */
	public void virtualThreads(boolean virtual) {
		if (virtual) {
			LockThreads.virtual("lockstep-check-");
		}
		this.virtualThreads = virtual;
	}

	/**
	 * Adds a listener told about every lost lease, on a thread of the library's own
	 * ({@code lockstep-events}).
	 */
	public void lockLostListener(LockLostListener listener) {
		Assert.notNull(listener, "'listener' must not be null");
		this.listeners.add(listener);
	}

	/**
	 * Overrides the wait and the lease for the lock name used with {@code named(String)}
	 * (or the annotation's name); {@code null} keeps the default.
	 */
	public void lockOverride(String name, Duration waitTime, Duration leaseTime) {
		lockOverride(name, waitTime, leaseTime, null);
	}

	/**
	 * Overrides the wait, the lease and the minimum hold (see
	 * {@code LockTemplate.withMinHoldTime}) for the lock name used with
	 * {@code named(String)} (or the annotation's name); {@code null} keeps the default.
	 */
	public void lockOverride(String name, Duration waitTime, Duration leaseTime, Duration minHoldTime) {
		Assert.hasText(name, "'name' must not be empty");
		Duration wait = (waitTime != null) ? LockSettings.checkWait(waitTime, "locks." + name + ".wait-time") : null;
		Duration lease = (leaseTime != null) ? LockSettings.checkLease(leaseTime, "locks." + name + ".lease-time")
				: null;
		Duration minHold = (minHoldTime != null)
				? LockSettings.checkMinHold(minHoldTime, "locks." + name + ".min-hold-time") : null;
		LockSettings.Override before = this.overrides.get(name);
		this.overrides.put(name,
				new LockSettings.Override(wait, lease, minHold, (before != null) ? before.lockDelay() : null));
	}

	/**
	 * How long a key stays unavailable after a lease that ended without a release (the
	 * holder died, froze or lost its connection), counted from the end of the lease in
	 * the storage; a release frees the key at once. {@link Duration#ZERO} (the default):
	 * none.
	 */
	public void lockDelay(Duration lockDelay) {
		this.lockDelay = LockSettings.checkLockDelay(lockDelay, "lockDelay");
	}

	/** The lock delay for one lock name, like {@link #lockDelay(Duration)}. */
	public void lockDelay(String name, Duration lockDelay) {
		Assert.hasText(name, "'name' must not be empty");
		Duration delay = LockSettings.checkLockDelay(lockDelay, "locks." + name + ".lock-delay");
		LockSettings.Override before = this.overrides.get(name);
		this.overrides.put(name,
				(before != null)
						? new LockSettings.Override(before.waitTime(), before.leaseTime(), before.minHoldTime(), delay)
						: new LockSettings.Override(null, null, null, delay));
	}

	/**
	 * Observes acquisitions ({@code lockstep.acquire}) and held locks
	 * ({@code lockstep.held}); {@code convention} may be {@code null} for the default.
	 */
	public void observationRegistry(ObservationRegistry registry, LockObservationConvention convention) {
		Assert.notNull(registry, "'registry' must not be null");
		this.observationRegistry = registry;
		this.observationConvention = convention;
	}

	/** The default lease and every per-name lease, with the property naming it. */
	public Map<String, Duration> leases() {
		Map<String, Duration> leases = new LinkedHashMap<>();
		leases.put("leaseTime", this.leaseTime);
		this.overrides.forEach((name, override) -> {
			if (override.leaseTime() != null) {
				leases.put("locks." + name + ".lease-time", override.leaseTime());
			}
		});
		return leases;
	}

	public String keyPrefix() {
		return this.keyPrefix;
	}

	/** An engine over the storage with this builder's settings. */
	public LockEngine engine(Storage storage) {
		return new LockEngine(storage,
				new EngineOptions(this.keyPrefix, this.maxHoldTime,
						new EngineOptions.OnLoss(List.copyOf(this.listeners), this.interruptOnLeaseLost),
						new LockObservations(this.observationRegistry, this.observationConvention), this.virtualThreads,
						WaitPolicy.DEFAULTS));
	}

	/**
	 * The settings of the template a builder returns.
	 * @throws IllegalArgumentException if a per-name minimum hold exceeds the max-hold
	 * cap
	 */
	public LockSettings settings() {
		this.overrides.forEach((name, override) -> {
			Duration minHold = override.minHoldTime();
			if (minHold != null && this.maxHoldTime != null && minHold.compareTo(this.maxHoldTime) > 0) {
				throw new IllegalArgumentException("'locks." + name + ".min-hold-time' (" + minHold
						+ ") must not be longer than the max-hold-time (" + this.maxHoldTime + ")");
			}
		});
		return new LockSettings(this.keyPrefix, null, null,
				new LockSettings.Timing(this.waitTime, this.leaseTime, false, Duration.ZERO, this.lockDelay),
				Map.copyOf(this.overrides), Sharing.EXCLUSIVE);
	}

}
