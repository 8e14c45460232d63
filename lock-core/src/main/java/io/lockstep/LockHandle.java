package io.lockstep;

import java.time.Duration;

/**
 * A held distributed lock. The handle, not the thread, is the owner: it may be closed
 * from any thread. Closing is idempotent and never releases a lock that another owner
 * holds now.
 *
 * <p>
 * The Redis key holds {@code "<owner token>:<fencing token>"} with a lease (PX). When the
 * lease runs out (a fixed lease, a holder paused longer than the lease, or Redis
 * unreachable past it), another owner can acquire the key while this holder still runs:
 * the handle then reports {@link #isHeld()} {@code false} and {@link #close()} throws
 * {@link LockLostException}. Pass {@link #fencingToken()} to storage that rejects writes
 * with a lower token than it has seen to make such late writes harmless.
 */
public interface LockHandle extends AutoCloseable {

	/**
	 * The Redis key of the lock, with the key prefix (for several keys: the keys joined
	 * by {@code ","}).
	 */
	String key();

	/**
	 * The fencing token: strictly increasing per key across all clients and across lease
	 * expiry, but not across a failover to a replica that missed the latest tokens (see
	 * the backend's documentation for its assumptions, e.g. Redlock's); reentrant
	 * acquisitions share the token of the outermost one. For a handle on several keys,
	 * the token of the first key in sorted order.
	 */
	long fencingToken();

	/**
	 * Whether this owner still holds the lock, judged locally: {@code false} once
	 * released, once a renewal found the key gone or owned by someone else, and once the
	 * lease may have expired by this client's conservative clock (lease minus drift since
	 * the last confirmed renewal was sent).
	 */
	boolean isHeld();

	/**
	 * Confirms with Redis (one round trip, no change) that this owner still holds the
	 * lock, as a transaction does before it commits.
	 * @throws LockLostException if it does not; the lease is then marked lost and
	 * reported
	 * @throws LockException if Redis cannot be reached
	 */
	void verifyHeld();

	/**
	 * Sets the lease to end {@code lease} from now, in the store (one round trip,
	 * token-checked there like a renewal), never past {@code max-hold-time}: a longer
	 * extension is cut at that cap. A fixed lease stays fixed (nothing renews it after
	 * this); a watchdog lease goes on being renewed, and its renewals never end it before
	 * the extension. A shorter {@code lease} than what remains shortens it. For a handle
	 * on several keys, or one that re-entered keys of an outer acquisition, every key it
	 * holds is extended.
	 * @param lease the new lease, from now (within the bounds of a fixed lease, see
	 * {@link LockTemplate#withLeaseTime(Duration)})
	 * @return whether the lock is still held: {@code false} once released or lost, or
	 * when the store found a key gone or held by another owner (the lease is then marked
	 * lost and reported)
	 * @throws LockException if Redis cannot be reached or does not answer within the
	 * command timeout
	 * @throws IllegalArgumentException if {@code lease} is {@code null} or out of range
	 */
	boolean extend(Duration lease);

	/**
	 * Releases the lock (for a reentrant acquisition: leaves one level). Idempotent.
	 * @throws LockLostException if the lease was lost while held; the key of the new
	 * owner, if any, is left untouched Redis not answering the release is logged and
	 * counted, not thrown, while the lease is still valid: the key then expires on its
	 * own.
	 */
	@Override
	void close();

}
