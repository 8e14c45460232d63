package io.lockstep;

import java.time.Duration;
import java.time.Instant;

/**
 * A lock this instance holds now, as the Actuator {@code locks} endpoint shows it.
 *
 * @param key the Redis key (several keys joined by {@code ","})
 * @param lockName the lock name used for metrics
 * @param fencingToken the fencing token
 * @param acquiredAt when it was acquired
 * @param leaseRemaining the lease left by this client's conservative clock
 * @param renewed whether the watchdog renews the lease (else the lease is fixed)
 * @param holderThread the name of the thread that acquired it
 * @param reentrancyDepth how many nested acquisitions hold it (1 = not re-entered)
 * @param mode {@link LockMode#READ} for one of the key's readers, else
 * {@link LockMode#WRITE}
 * @param permits for a semaphore, how many holders the key admits at once; 1 for a plain
 * lock or a read lock
 */
public record LockInfo(String key, String lockName, long fencingToken, Instant acquiredAt, Duration leaseRemaining,
		boolean renewed, String holderThread, int reentrancyDepth, LockMode mode, int permits) {

	/** A plain (exclusive) lock. */
	public LockInfo(String key, String lockName, long fencingToken, Instant acquiredAt, Duration leaseRemaining,
			boolean renewed, String holderThread, int reentrancyDepth) {
		this(key, lockName, fencingToken, acquiredAt, leaseRemaining, renewed, holderThread, reentrancyDepth,
				LockMode.WRITE, 1);
	}

}
