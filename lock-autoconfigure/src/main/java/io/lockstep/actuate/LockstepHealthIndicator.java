package io.lockstep.actuate;

import java.time.Duration;
import java.util.Objects;

import io.lockstep.LockException;
import io.lockstep.LockMonitor;
import io.lockstep.internal.DurationFormat;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * {@code lockstep} health: DOWN while Redis does not answer (one cheap read through the
 * lock client's own connection, bounded by its command timeout, so a frozen Redis gives
 * DOWN within that timeout instead of a hanging check) or while lease renewals are
 * failing, when held locks may be lost; UP otherwise. Details: {@code reason} (why DOWN),
 * {@code responseTime} (of the read), held locks, leases lost since start, releases that
 * failed after the work completed, whether locks are distributed (false with
 * {@code lockstep.enabled=false}), and the last renewal failure.
 */
public class LockstepHealthIndicator extends AbstractHealthIndicator {

	private final LockMonitor locks;

	public LockstepHealthIndicator(LockMonitor locks) {
		super("Lockstep health check failed");
		this.locks = locks;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		String reason = null;
		try {
			Duration responseTime = this.locks.ping();
			builder.withDetail("responseTime", DurationFormat.format(responseTime));
		}
		catch (LockException ex) {
			reason = ex.getMessage();
		}
		builder.withDetail("heldLocks", this.locks.heldLocks().size())
			.withDetail("leasesLost", this.locks.leasesLost())
			.withDetail("releaseFailures", this.locks.releaseFailures())
			.withDetail("distributed", this.locks.isDistributed());
		if (this.locks.renewalsFailing()) {
			String lastFailure = Objects.requireNonNullElse(this.locks.lastRenewalFailure(), "unknown");
			builder.withDetail("renewals", "failing").withDetail("lastFailure", lastFailure);
			if (reason == null) {
				reason = "lease renewals are failing: " + lastFailure;
			}
		}
		else {
			builder.withDetail("renewals", "ok");
		}
		if (reason != null) {
			builder.down().withDetail("reason", reason);
		}
		else {
			builder.up();
		}
	}

}
