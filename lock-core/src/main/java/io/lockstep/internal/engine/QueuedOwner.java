package io.lockstep.internal.engine;

/**
 * What an {@link Acquisition} knows of its owner token's place in the storage's queue and
 * of the hand-offs to it: whether a reply left it queued, from which attempt (a hand-off
 * is counted from that attempt's send time) and with which fencing counter (a hand-off
 * with a smaller token was granted before that reply and is void), and a hand-off that
 * came while an attempt was on its way. Owned by one acquisition, changed only by it.
 */
final class QueuedOwner {

	/** Whether a reply left the owner queued (until it leaves the queue). */
	private boolean queued;

	/** The send time of the last attempt whose reply left the owner queued. */
	private long queuedSent;

	/** The fencing counter that reply told, or -1: older hand-offs are stale. */
	private long queuedCounter = -1;

	/** A hand-off that came while an attempt was on its way. */
	private HandOff pending;

	/** What a pending hand-off counts from when the attempt's reply does not tell. */
	private long pendingAnchor;

	/**
	 * A hand-off to the owner token: the lock's fencing token and the lease it grants.
	 */
	record HandOff(long fencingToken, long leaseMillis) {
	}

	/** A pending hand-off to take, and what it counts from. */
	record Take(HandOff handOff, long anchor) {
	}

	boolean queued() {
		return this.queued;
	}

	long queuedSent() {
		return this.queuedSent;
	}

	boolean hasPending() {
		return this.pending != null;
	}

	void clearPending() {
		this.pending = null;
	}

	/** The reply to an attempt sent at {@code sentNanos} left the owner queued. */
	void queuedBy(long sentNanos, long fencingCounter) {
		this.queued = true;
		this.queuedSent = sentNanos;
		this.queuedCounter = fencingCounter;
	}

	/**
	 * A held reply came: the pending hand-off it makes current, with what it counts from,
	 * or {@code null}; the pending hand-off is settled either way.
	 * @param fencingCounter the counter the reply told, or negative when unknown
	 * @param sentNanos when the replied attempt was sent
	 */
	Take settle(long fencingCounter, long sentNanos) {
		HandOff handOff = this.pending;
		this.pending = null;
		if (handOff == null) {
			return null;
		}
		if (fencingCounter < 0) {
			return new Take(handOff, this.pendingAnchor);
		}
		// granted after the replied attempt ran
		return (handOff.fencingToken() > fencingCounter) ? new Take(handOff, sentNanos) : null;
	}

	/**
	 * A hand-off came while an attempt was on its way: kept when the owner may be queued,
	 * counted from before that attempt (the grant may precede it).
	 * @param queuing whether the attempt on its way queues the owner
	 */
	void arrivedWhileAsking(HandOff handOff, boolean queuing, long sentNanos) {
		if (this.queued || queuing) {
			this.pending = handOff;
			this.pendingAnchor = this.queued ? this.queuedSent : sentNanos;
		}
	}

	/**
	 * A hand-off by a release of this client came while an attempt was on its way: kept,
	 * counted from when that release was sent.
	 */
	void arrivedHere(HandOff handOff, long releaseSentNanos) {
		this.pending = handOff;
		this.pendingAnchor = releaseSentNanos;
	}

	/** Whether a hand-off that came while waiting is for the current queue entry. */
	boolean current(HandOff handOff) {
		return this.queued && handOff.fencingToken() >= this.queuedCounter;
	}

}
