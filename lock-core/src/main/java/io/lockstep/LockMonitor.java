package io.lockstep;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

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
	 * The lease left on a key held by any owner in any process (as Redis counts it), or
	 * empty when nobody holds it; named like {@link LockInfo#leaseRemaining()}.
	 * @param key the key as passed to the template (without the key prefix)
	 */
	Optional<Duration> leaseRemaining(String key);

	/**
	 * Asks the storage one cheap question (the remaining lease of the reserved key
	 * {@code <key-prefix>__ping}; on Redlock, whether each node persists its data) and
	 * waits for the answer at most the command timeout; connects first if needed.
	 * @return how long the answer took
	 * @throws LockException when the storage does not answer in time or fails, with the
	 * cause, or refuses locks (Redlock: fewer than a quorum of nodes persist their data)
	 */
	Duration ping();

	/** Leases lost while held, since start. */
	long leasesLost();

	/** Releases that failed after the guarded work completed (left to expire). */
	long releaseFailures();

	/** Whether the latest lease renewal failed to reach the storage. */
	boolean renewalsFailing();

	/** The latest renewal failure, or {@code null}. */
	@Nullable String lastRenewalFailure();

	/** Whether locks exclude other processes ({@code false} for JVM-local locks). */
	boolean isDistributed();

}
