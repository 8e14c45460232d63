package io.lockstep.autoconfigure;

import java.time.Duration;

import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.engine.LockSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.validation.BindingResult;
import org.springframework.validation.Errors;
import org.springframework.validation.FieldError;

/**
 * The ranges of the bound {@code lockstep.*} values, checked when Spring Boot binds them
 * ({@link LockstepProperties} validates itself): a value out of range fails start-up in
 * Spring Boot's failure report under the property's name as the configuration writes it
 * ({@code lockstep.locks.stock.lease-time}), with the value and the range, before any
 * bean uses it. Checks that relate two properties (a command timeout within a third of
 * the shortest lease, a minimum hold within a fixed lease) stay with the beans that
 * combine them.
 */
final class PropertyValues {

	private static final String PREFIX = "lockstep";

	private static final Duration MIN_POSITIVE = Duration.ofMillis(1);

	private final Errors errors;

	private PropertyValues(Errors errors) {
		this.errors = errors;
	}

	static void check(LockstepProperties properties, Errors errors) {
		PropertyValues values = new PropertyValues(errors);
		values.between("wait-time", properties.getWaitTime(), Duration.ZERO, LockSettings.MAX_WAIT);
		values.between("lease-time", properties.getLeaseTime(), LockSettings.MIN_LEASE, LockSettings.MAX_LEASE);
		values.between("command-timeout", properties.getCommandTimeout(), MIN_POSITIVE, CommandTimeout.MAX);
		values.positive("max-hold-time", properties.getMaxHoldTime());
		values.between("lock-delay", properties.getLockDelay(), Duration.ZERO, LockSettings.MAX_LEASE);
		if (properties.getKeyPrefix() == null || properties.getKeyPrefix().length() > 128) {
			values.reject("key-prefix", properties.getKeyPrefix(), "must be at most 128 characters");
		}
		properties.getLocks().forEach((name, lock) -> {
			String lockPrefix = "locks." + name + ".";
			values.between(lockPrefix + "wait-time", lock.getWaitTime(), Duration.ZERO, LockSettings.MAX_WAIT);
			values.between(lockPrefix + "lease-time", lock.getLeaseTime(), LockSettings.MIN_LEASE,
					LockSettings.MAX_LEASE);
			values.between(lockPrefix + "min-hold-time", lock.getMinHoldTime(), Duration.ZERO, LockSettings.MAX_LEASE);
			values.between(lockPrefix + "lock-delay", lock.getLockDelay(), Duration.ZERO, LockSettings.MAX_LEASE);
		});
		LockstepProperties.Replication replication = properties.getReplication();
		if (replication.getAcknowledgements() < 0) {
			values.reject("replication.acknowledgements", replication.getAcknowledgements(),
					"must not be negative, got " + replication.getAcknowledgements());
		}
		values.positive("replication.timeout", replication.getTimeout());
		LockstepProperties.Redlock redlock = properties.getRedlock();
		double factor = redlock.getClockDriftFactor();
		if (!(factor >= 0 && factor <= 0.5)) {
			values.reject("redlock.clock-drift-factor", factor, "must be between 0 and 0.5, got " + factor);
		}
		values.positive("redlock.node-timeout", redlock.getNodeTimeout());
	}

	/** A duration that, when set, lies within {@code [min, max]}. */
	private void between(String property, @Nullable Duration value, Duration min, Duration max) {
		if (value != null && (value.compareTo(min) < 0 || value.compareTo(max) > 0)) {
			reject(property, DurationFormat.format(value), "must be between " + DurationFormat.format(min) + " and "
					+ DurationFormat.format(max) + ", got " + DurationFormat.format(value));
		}
	}

	/** A duration that, when set, is longer than zero. */
	private void positive(String property, @Nullable Duration value) {
		if (value != null && (value.isNegative() || value.isZero())) {
			reject(property, DurationFormat.format(value), "must be positive, got " + DurationFormat.format(value));
		}
	}

	/**
	 * A field error named as the configuration writes the property, so that Spring Boot's
	 * report says {@code Property: lockstep.locks.stock.lease-time}.
	 */
	private void reject(String property, @Nullable Object value, String reason) {
		String message = PREFIX + "." + property + " " + reason;
		if (this.errors instanceof BindingResult result) {
			result.addError(new FieldError(this.errors.getObjectName(), property, value, false,
					new String[] { "lockstep.invalid" }, null, message));
		}
		else {
			this.errors.reject("lockstep.invalid", message);
		}
	}

}
