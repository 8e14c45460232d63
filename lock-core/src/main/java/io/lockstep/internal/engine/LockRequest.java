package io.lockstep.internal.engine;

import java.util.List;

/**
 * One caller's request for a lock, as its template copy settles it
 * ({@link LockSettings#request}): what travels from the template through the engine and
 * the acquisition to the lease.
 *
 * @param id the lock: its keys and how they are shared
 * @param lockName the lock's name (observations, lock-lost events)
 * @param waitNanos how long to wait while another owner holds the lock
 * @param hold the lease, its renewal, minimum hold and lock delay
 * @param skips whether the caller skips its work when the wait runs out (the wait then
 * ends without an exception, observed as {@code skipped}, not {@code timeout})
 */
record LockRequest(LockId id, String lockName, long waitNanos, HoldTerms hold, boolean skips) {

	/** The same request for some of its keys. */
	LockRequest withKeys(List<String> keys) {
		return new LockRequest(this.id.withKeys(keys), this.lockName, this.waitNanos, this.hold, this.skips);
	}

}
