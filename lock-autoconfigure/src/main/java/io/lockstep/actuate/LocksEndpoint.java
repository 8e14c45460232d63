package io.lockstep.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.lockstep.LockInfo;
import io.lockstep.LockMode;
import io.lockstep.LockMonitor;
import io.lockstep.internal.DurationFormat;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code GET /actuator/locks}: the locks this instance holds now. {@code GET
 * /actuator/locks/{key}}: whether any instance holds the key, and for how long still.
 * Durations are written as in {@code application.yml} ({@code 27.4s}, {@code 250ms}).
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
	 * Whether any instance holds a key. The key is either the Redis key, as
	 * {@code /actuator/locks} lists it ({@code lockstep:stock:mug}), or the same without
	 * the key prefix, as the application names it ({@code stock:mug} for
	 * {@code locks.named("stock")} and key {@code mug}, or for
	 * {@code @DistributedLock(name = "stock")} on {@code mug}). A key that starts with
	 * the key prefix is taken as a Redis key.
	 * @param key the Redis key, or the key without the key prefix
	 */
	@ReadOperation
	public KeyState lock(@Selector String key) {
		String prefix = this.locks.keyPrefix();
		String unprefixed = key.startsWith(prefix) ? key.substring(prefix.length()) : key;
		Optional<Duration> remaining = this.locks.leaseRemaining(unprefixed);
		return new KeyState(prefix + unprefixed, remaining.isPresent(),
				remaining.map(DurationFormat::format).orElse(null));
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
	 * @param leaseRemaining lease left by this instance's conservative clock, e.g.
	 * {@code 27.4s}
	 * @param renewed whether the watchdog renews it
	 * @param holderThread the thread that acquired it
	 * @param reentrancyDepth nested acquisitions
	 * @param mode {@code READ} for one of the key's readers, else {@code WRITE}
	 * @param permits for one holder of a semaphore, how many holders the key admits; 1
	 * otherwise
	 */
	public record HeldLock(String key, String lockName, long fencingToken, String acquiredAt, String leaseRemaining,
			boolean renewed, String holderThread, int reentrancyDepth, LockMode mode, int permits) {

		static HeldLock of(LockInfo info) {
			return new HeldLock(info.key(), info.lockName(), info.fencingToken(), info.acquiredAt().toString(),
					DurationFormat.format(info.leaseRemaining()), info.renewed(), info.holderThread(),
					info.reentrancyDepth(), info.mode(), info.permits());
		}

	}

	/**
	 * Whether any instance holds a key.
	 *
	 * @param key the Redis key
	 * @param locked whether it is held now
	 * @param leaseRemaining its remaining lease in Redis, e.g. {@code 27.4s}, or
	 * {@code null} when not held
	 */
	public record KeyState(String key, boolean locked, @Nullable String leaseRemaining) {
	}

}
