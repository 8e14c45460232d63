package io.lockstep.actuate;

import io.lockstep.LockMonitor;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * {@code lockstep} health: DOWN while lease renewals are failing (Redis unreachable),
 * when held locks may be lost; UP otherwise. Details: held locks, leases lost since
 * start, releases that failed after the work completed, whether locks are distributed
 * (false with {@code lockstep.enabled=false}), and the last renewal failure.
 */
public class LockstepHealthIndicator extends AbstractHealthIndicator {

	private final LockMonitor locks;

	public LockstepHealthIndicator(LockMonitor locks) {
		super("Lockstep health check failed");
		this.locks = locks;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("heldLocks", this.locks.heldLocks().size())
			.withDetail("leasesLost", this.locks.leasesLost())
			.withDetail("releaseFailures", this.locks.releaseFailures())
			.withDetail("distributed", this.locks.isDistributed());
		if (this.locks.renewalsFailing()) {
			builder.down().withDetail("renewals", "failing").withDetail("lastFailure", this.locks.lastRenewalFailure());
		}
		else {
			builder.up().withDetail("renewals", "ok");
		}
	}

}
