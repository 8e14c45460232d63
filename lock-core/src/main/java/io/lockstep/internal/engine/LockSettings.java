package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import io.lockstep.LockKeyException;
import io.lockstep.LockMode;
import io.lockstep.internal.DurationFormat;

import org.springframework.util.Assert;

/**
 * The settings of one template copy: key prefix, name, wait and lease, whether the lease
 * is fixed (never renewed), and the minimum hold. Over 300 lines for a reason: the value,
 * its copies and the checks of every setting, whose messages name the property, are one.
 *
 * @param keyPrefix prefix of every key
 * @param name the namespace of keys ({@code named}), or {@code null}
 * @param reportedName the lock name for metrics when not the namespace, or {@code null}
 * @param timing the wait, the lease, the minimum hold and the lock delay
 * @param overrides per-name wait, lease, minimum hold and lock delay
 * @param sharing how the copy's locks share their key (plain, read, semaphore)
 */
public record LockSettings(String keyPrefix, String name, String reportedName, Timing timing,
		Map<String, Override> overrides, Sharing sharing) {

	/**
	 * How long a copy's callers wait and hold.
	 *
	 * @param waitTime the wait for a lock
	 * @param leaseTime the lease
	 * @param fixedLease whether the lease is fixed (never renewed)
	 * @param minHoldTime how long after acquisition a released lock stays taken, or
	 * {@link Duration#ZERO} for none
	 * @param lockDelay how long a key stays unavailable after a lease that ended without
	 * a release, or {@link Duration#ZERO} for none
	 */
	public record Timing(Duration waitTime, Duration leaseTime, boolean fixedLease, Duration minHoldTime,
			Duration lockDelay) {

		Timing withWait(Duration waitTime) {
			return new Timing(waitTime, this.leaseTime, this.fixedLease, this.minHoldTime, this.lockDelay);
		}

		Timing withLease(Duration leaseTime, boolean fixedLease) {
			return new Timing(this.waitTime, leaseTime, fixedLease, this.minHoldTime, this.lockDelay);
		}

		Timing withMinHold(Duration minHoldTime) {
			return new Timing(this.waitTime, this.leaseTime, this.fixedLease, minHoldTime, this.lockDelay);
		}

	}

	/** The longest key (prefix, name and key) accepted, in UTF-8 bytes. */
	public static final int MAX_KEY_BYTES = 1024;

	public static final Duration MAX_WAIT = Duration.ofHours(1);

	public static final Duration MIN_LEASE = Duration.ofMillis(30);

	public static final Duration MAX_LEASE = Duration.ofDays(1);

	/**
	 * Per-name wait, lease, minimum hold and lock delay; {@code null} keeps the default.
	 */
	public record Override(Duration waitTime, Duration leaseTime, Duration minHoldTime, Duration lockDelay) {
	}

	/**
	 * The request of a caller of this copy for the lock {@code id}.
	 * @param waitNanos how long it waits
	 * @param skips whether it skips its work when the wait runs out
	 */
	LockRequest request(LockId id, long waitNanos, boolean skips) {
		return new LockRequest(id, lockName(), waitNanos, holdTerms(), skips);
	}

	/** This copy with the other parts given; the key prefix and overrides stay. */
	private LockSettings copy(String name, String reportedName, Timing timing, Sharing sharing) {
		return new LockSettings(this.keyPrefix, name, reportedName, timing, this.overrides, sharing);
	}

	/** The wait for a lock. */
	public Duration waitTime() {
		return this.timing.waitTime();
	}

	/** The lease. */
	public Duration leaseTime() {
		return this.timing.leaseTime();
	}

	/** Whether the lease is fixed (never renewed). */
	public boolean fixedLease() {
		return this.timing.fixedLease();
	}

	/** How long after acquisition a released lock stays taken, or zero. */
	public Duration minHoldTime() {
		return this.timing.minHoldTime();
	}

	/** How long a key stays unavailable after a lease that ended without a release. */
	public Duration lockDelay() {
		return this.timing.lockDelay();
	}

	/** The hold a caller of this copy asks for. */
	private HoldTerms holdTerms() {
		return new HoldTerms(this.timing.leaseTime().toNanos(), !this.timing.fixedLease(),
				this.timing.minHoldTime().toNanos(), this.timing.lockDelay().toMillis());
	}

	/**
	 * @throws IllegalArgumentException when negative or longer than the longest lease
	 */
	public static Duration checkLockDelay(Duration lockDelay, String what) {
		Assert.notNull(lockDelay, () -> "'" + what + "' must not be null");
		if (lockDelay.isNegative() || lockDelay.compareTo(MAX_LEASE) > 0) {
			throw new IllegalArgumentException("'" + what + "' must be between 0s and "
					+ DurationFormat.format(MAX_LEASE) + " but was " + DurationFormat.format(lockDelay));
		}
		return lockDelay;
	}

	public long waitNanos() {
		return this.timing.waitTime().toNanos();
	}

	public long minHoldNanos() {
		return this.timing.minHoldTime().toNanos();
	}

	/**
	 * The lock name for metrics and events: the template's name, else {@code "default"}.
	 */
	public String lockName() {
		if (this.reportedName != null) {
			return this.reportedName;
		}
		return (this.name != null) ? this.name : "default";
	}

	LockSettings withLockName(String lockName) {
		Assert.hasText(lockName, "'lockName' must not be empty");
		return copy(this.name, lockName, this.timing, this.sharing);
	}

	LockSettings withWaitTime(Duration waitTime) {
		return copy(this.name, this.reportedName, this.timing.withWait(checkWait(waitTime, "waitTime")), this.sharing);
	}

	/**
	 * @throws IllegalArgumentException if the lease is shorter than the minimum hold
	 */
	LockSettings withLeaseTime(Duration leaseTime) {
		checkLease(leaseTime, "leaseTime");
		checkMinHoldWithin(this.timing.minHoldTime(), leaseTime, "the fixed 'leaseTime'");
		return copy(this.name, this.reportedName, this.timing.withLease(leaseTime, true), this.sharing);
	}

	/**
	 * @param minHoldTime {@link Duration#ZERO} for none
	 * @param maxHoldTime the engine's hard cap, or {@code null}
	 * @throws IllegalArgumentException if it is negative, longer than a fixed lease or
	 * longer than the max-hold cap
	 */
	LockSettings withMinHoldTime(Duration minHoldTime, Duration maxHoldTime) {
		checkMinHold(minHoldTime, "minHoldTime");
		if (this.timing.fixedLease()) {
			checkMinHoldWithin(minHoldTime, this.timing.leaseTime(), "the fixed 'leaseTime'");
		}
		if (maxHoldTime != null) {
			checkMinHoldWithin(minHoldTime, maxHoldTime, "the max-hold-time");
		}
		return copy(this.name, this.reportedName, this.timing.withMinHold(minHoldTime), this.sharing);
	}

	/**
	 * @param permits checked by {@link Sharing}
	 * @param view the template call, for messages
	 * @throws IllegalArgumentException as {@link Sharing} does, naming the call
	 */
	LockSettings withSharing(LockMode mode, int permits, String view) {
		Sharing sharing;
		try {
			sharing = (mode == LockMode.READ) ? new Sharing(mode, permits) : Sharing.permits(permits);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(view + ": " + ex.getMessage(), ex);
		}
		return copy(this.name, this.reportedName, this.timing, sharing);
	}

	LockSettings named(String name) {
		Assert.hasText(name, "'name' must not be empty");
		Assert.isTrue(!name.startsWith("__"), () -> "Lock names starting with '__' are reserved, got '" + name + "'");
		String qualified = (this.name != null) ? this.name + ":" + name : name;
		Override override = this.overrides.get(qualified);
		Duration wait = (override != null && override.waitTime() != null) ? override.waitTime()
				: this.timing.waitTime();
		boolean fixed = this.timing.fixedLease();
		Duration lease = this.timing.leaseTime();
		if (override != null && override.leaseTime() != null) {
			lease = override.leaseTime();
		}
		Duration minHold = (override != null && override.minHoldTime() != null) ? override.minHoldTime()
				: this.timing.minHoldTime();
		if (fixed) {
			checkMinHoldWithin(minHold, lease, "the fixed 'leaseTime'");
		}
		Duration delay = (override != null && override.lockDelay() != null) ? override.lockDelay()
				: this.timing.lockDelay();
		return copy(qualified, null, new Timing(wait, lease, fixed, minHold, delay), this.sharing);
	}

	public static Duration checkWait(Duration waitTime, String what) {
		Assert.notNull(waitTime, () -> "'" + what + "' must not be null");
		if (waitTime.isNegative() || waitTime.compareTo(MAX_WAIT) > 0) {
			throw new IllegalArgumentException("'" + what + "' must be between 0s and "
					+ DurationFormat.format(MAX_WAIT) + " but was " + DurationFormat.format(waitTime));
		}
		return waitTime;
	}

	public static Duration checkLease(Duration leaseTime, String what) {
		Assert.notNull(leaseTime, () -> "'" + what + "' must not be null");
		if (leaseTime.compareTo(MIN_LEASE) < 0 || leaseTime.compareTo(MAX_LEASE) > 0) {
			throw new IllegalArgumentException("'" + what + "' must be between " + DurationFormat.format(MIN_LEASE)
					+ " and " + DurationFormat.format(MAX_LEASE) + " but was " + DurationFormat.format(leaseTime));
		}
		return leaseTime;
	}

	public static Duration checkMinHold(Duration minHoldTime, String what) {
		Assert.notNull(minHoldTime, () -> "'" + what + "' must not be null");
		if (minHoldTime.isNegative() || minHoldTime.compareTo(MAX_LEASE) > 0) {
			throw new IllegalArgumentException(
					"'" + what + "' must be between 0 and " + MAX_LEASE + " but was " + minHoldTime);
		}
		return minHoldTime;
	}

	/**
	 * @throws IllegalArgumentException if the minimum hold is longer than the limit: the
	 * key could not stay taken that long
	 */
	static void checkMinHoldWithin(Duration minHoldTime, Duration limit, String limitName) {
		if (minHoldTime.compareTo(limit) > 0) {
			throw new IllegalArgumentException(
					"'minHoldTime' (" + minHoldTime + ") must not be longer than " + limitName + " (" + limit + ")");
		}
	}

	/**
	 * The Redis key of a lock key: {@code <prefix>[<name>:]<key>}.
	 * @throws LockKeyException for a {@code null}, blank, reserved or too long key
	 */
	public String redisKey(String key) {
		if (key == null) {
			throw new LockKeyException("Lock key must not be null");
		}
		if (key.isBlank()) {
			throw new LockKeyException("Lock key must not be empty or blank, got '" + key + "'");
		}
		if (this.name == null && key.startsWith("__")) {
			throw new LockKeyException("Lock keys starting with '__' are reserved, got '" + key + "'");
		}
		String redisKey = this.keyPrefix + ((this.name != null) ? this.name + ":" : "") + key;
		int bytes = utf8Length(redisKey);
		if (bytes > MAX_KEY_BYTES) {
			throw new LockKeyException("Lock key is " + bytes + " bytes as a Redis key, over the limit of "
					+ MAX_KEY_BYTES + ": '" + redisKey.substring(0, 64) + "...'");
		}
		return redisKey;
	}

	/**
	 * The length of a key in UTF-8, counted without encoding it. Refuses a key with an
	 * unpaired surrogate: UTF-8 cannot encode it, and Java's encoder writes {@code '?'}
	 * instead, so {@code "k"} followed by a lone U+D800 would be the Redis key of
	 * {@code "k?"}: another lock.
	 */
	private static int utf8Length(String redisKey) {
		int bytes = 0;
		for (int i = 0; i < redisKey.length(); i++) {
			char c = redisKey.charAt(i);
			if (c < 0x80) {
				bytes += 1;
			}
			else if (c < 0x800) {
				bytes += 2;
			}
			else if (Character.isHighSurrogate(c) && i + 1 < redisKey.length()
					&& Character.isLowSurrogate(redisKey.charAt(i + 1))) {
				bytes += 4;
				i++;
			}
			else if (Character.isSurrogate(c)) {
				throw new LockKeyException("Lock key '" + redisKey + "' has an unpaired surrogate (\\u"
						+ Integer.toHexString(c).toUpperCase() + " at index " + i
						+ "), which UTF-8 cannot encode: it would be stored as another key");
			}
			else {
				bytes += 3;
			}
		}
		return bytes;
	}

	/** The lock of one key. */
	LockId lockId(String key) {
		return LockId.of(redisKey(key), this.sharing);
	}

	/**
	 * The lock of several keys: their distinct full keys, sorted.
	 * @throws LockKeyException for a {@code null} or empty collection, or a bad element
	 */
	LockId lockId(Collection<String> keys) {
		if (keys == null || keys.isEmpty()) {
			throw new LockKeyException("Lock keys must not be null or empty, got " + keys);
		}
		if (!this.sharing.exclusive()) {
			throw new IllegalArgumentException("Read locks and semaphores take one key, but " + this.sharing.describe()
					+ " was asked for " + keys.size() + " keys " + keys);
		}
		List<String> full = new ArrayList<>(keys.size());
		int index = 0;
		for (String key : keys) {
			if (key == null) {
				throw new LockKeyException("Lock keys must not be null: null at index " + index + " of " + keys);
			}
			full.add(redisKey(key));
			index++;
		}
		return LockId.of(full);
	}

}
