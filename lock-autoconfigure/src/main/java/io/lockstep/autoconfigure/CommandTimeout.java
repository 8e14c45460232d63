package io.lockstep.autoconfigure;

import java.time.Duration;

import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.LockConfigurationException;
import org.jspecify.annotations.Nullable;

/**
 * The bound on every Redis command of the lock client: {@code lockstep.command-timeout}
 * when set; else Spring Boot's {@code spring.data.redis.timeout} when set (the single
 * Redis of {@code spring.data.redis.*}, not Redlock's nodes); else 2s. Every command must
 * fit in a third of the shortest lease (the default one and each per-name one), so that a
 * renewal sent at a third of the lease can time out and be retried before the lease ends:
 * a default is shortened to that third, a value set in {@code lockstep.command-timeout}
 * beyond it fails start-up naming the property.
 */
final class CommandTimeout {

	static final Duration DEFAULT = Duration.ofSeconds(2);

	/** The longest the lock client accepts. */
	static final Duration MAX = Duration.ofMinutes(1);

	private CommandTimeout() {
	}

	/**
	 * @param redisTimeout {@code spring.data.redis.timeout}, or {@code null} when not set
	 * or not applicable (Redlock)
	 * @throws LockConfigurationException if {@code lockstep.command-timeout} is longer
	 * than a third of the shortest lease (its range, up to a minute, is checked when the
	 * properties are bound)
	 */
	static Duration of(LockstepProperties properties, @Nullable Duration redisTimeout) {
		Duration shortest = properties.getLeaseTime();
		String shortestName = "lockstep.lease-time";
		for (var lock : properties.getLocks().entrySet()) {
			Duration lease = lock.getValue().getLeaseTime();
			if (lease != null && lease.compareTo(shortest) < 0) {
				shortest = lease;
				shortestName = "lockstep.locks." + lock.getKey() + ".lease-time";
			}
		}
		Duration third = shortest.dividedBy(3);
		Duration configured = properties.getCommandTimeout();
		if (configured != null) {
			return checked(configured, third, shortestName, shortest);
		}
		Duration timeout = (redisTimeout != null && redisTimeout.compareTo(Duration.ZERO) > 0) ? redisTimeout : DEFAULT;
		timeout = min(min(timeout, third), MAX);
		return timeout.isZero() ? Duration.ofMillis(1) : timeout;
	}

	private static Duration checked(Duration configured, Duration third, String shortestName, Duration shortest) {
		String value = DurationFormat.format(configured);
		if (configured.compareTo(third) > 0) {
			throw new LockConfigurationException(
					"lockstep.command-timeout (" + value + ") must not exceed a third of the shortest lease, "
							+ shortestName + " (" + DurationFormat.format(shortest)
							+ "): a renewal sent at a third of the lease must be able to "
							+ "time out and be retried before the lease ends",
					"Set lockstep.command-timeout to at most " + DurationFormat.format(third) + ", or lengthen "
							+ shortestName + " to at least three times " + value + ".");
		}
		return configured;
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

}
