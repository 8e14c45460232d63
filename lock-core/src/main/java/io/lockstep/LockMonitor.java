package io.lockstep;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A read-only view of the locks of one lock client (the {@link LockTemplate} bean and its
 * copies), as the Actuator endpoint and the health indicator show it.
 */
public interface LockMonitor {

	/** The locks this instance holds now, oldest first. */
	List<LockInfo> heldLocks();

	/** The prefix of every key of this client, e.g. {@code lockstep:}. */
	String keyPrefix();

	/**
	 * The remaining lease of a key held by any owner in any process, or empty when nobody
	 * holds it.
	 * @param key the key as passed to the template (without the key prefix)
	 */
	Optional<Duration> remainingLease(String key);

	/** Leases lost while held, since start. */
	long leasesLost();

	/** Releases that failed after the guarded work completed (left to expire). */
	long releaseFailures();

	/** Whether the latest lease renewal failed to reach the storage. */
	boolean renewalsFailing();

	/** The latest renewal failure, or {@code null}. */
	String lastRenewalFailure();

	/** Whether locks exclude other processes ({@code false} for JVM-local locks). */
	boolean isDistributed();

}
