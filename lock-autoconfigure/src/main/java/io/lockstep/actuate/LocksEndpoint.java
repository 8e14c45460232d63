package io.lockstep.actuate;

import java.util.List;
import java.util.Optional;

import io.lockstep.LockInfo;
import io.lockstep.LockMonitor;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code GET /actuator/locks}: the locks this instance holds now. {@code GET
 * /actuator/locks/{key}}: whether any instance holds the key, and for how long still.
 * Read-only: there is no way to force a release through this endpoint.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {

	private final LockMonitor locks;

	public LocksEndpoint(LockMonitor locks) {
		this.locks = locks;
	}

	@ReadOperation
	public HeldLocks locks() {
		return new HeldLocks(this.locks.heldLocks().stream().map(HeldLock::of).toList());
	}

	/**
	 * @param key the key as listed (with the key prefix) or as passed to the template
	 */
	@ReadOperation
	public KeyState lock(@Selector String key) {
		String prefix = this.locks.keyPrefix();
		String unprefixed = key.startsWith(prefix) ? key.substring(prefix.length()) : key;
		Optional<Long> remaining = this.locks.remainingLease(unprefixed).map(java.time.Duration::toMillis);
		return new KeyState(prefix + unprefixed, remaining.isPresent(), remaining.orElse(null));
	}

	/**
	 * The locks this instance holds.
	 *
	 * @param locks one entry per held lock, oldest first
	 */
	public record HeldLocks(List<HeldLock> locks) {
	}

	/**
	 * A held lock.
	 *
	 * @param key the Redis key
	 * @param lockName the lock name used for metrics
	 * @param fencingToken the fencing token
	 * @param acquiredAt when it was acquired (ISO-8601)
	 * @param leaseRemainingMillis lease left by this instance's conservative clock
	 * @param renewed whether the watchdog renews it
	 * @param holderThread the thread that acquired it
	 * @param reentrancyDepth nested acquisitions
	 */
	public record HeldLock(String key, String lockName, long fencingToken, String acquiredAt, long leaseRemainingMillis,
			boolean renewed, String holderThread, int reentrancyDepth) {

		static HeldLock of(LockInfo info) {
			return new HeldLock(info.key(), info.lockName(), info.fencingToken(), info.acquiredAt().toString(),
					info.leaseRemaining().toMillis(), info.renewed(), info.holderThread(), info.reentrancyDepth());
		}

	}

	/**
	 * Whether any instance holds a key.
	 *
	 * @param key the Redis key
	 * @param locked whether it is held now
	 * @param remainingLeaseMillis its remaining lease in Redis, or {@code null}
	 */
	public record KeyState(String key, boolean locked, Long remainingLeaseMillis) {
	}

}
