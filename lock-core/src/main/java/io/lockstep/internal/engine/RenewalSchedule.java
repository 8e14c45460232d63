package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;

/**
 * A lease's local deadline and renewal schedule. The deadline is conservative: the send
 * time of the last confirmed acquire or renewal plus the lease it granted, minus the
 * storage's drift allowance ({@link LockStore#driftNanos}); the storage's key never
 * expires before it. Written only by the watchdog thread (and, once, by the acquiring
 * one); read by any.
 */
final class RenewalSchedule {

	private final long leaseNanos;

	private final LongUnaryOperator drift;

	private volatile long deadlineNanos;

	private volatile long lastSentNanos;

	private volatile boolean renewing;

	private volatile String error;

	private volatile boolean capped;

	/**
	 * Until when the latest {@link #extended extension} set the lease ({@code nanoTime}),
	 * or {@link #NOT_EXTENDED}: the watchdog's renewals never end the lease before it.
	 */
	private volatile long extendedUntilNanos = NOT_EXTENDED;

	/** The send time of the latest extension, for a renewal confirmed after it. */
	private volatile long extendedSentNanos = NOT_EXTENDED;

	static final long NOT_EXTENDED = Long.MIN_VALUE;

	/**
	 * From the last renewal sent to the next: a third of the lease; a third of a shorter
	 * first grant that the cap did not set (a hand-off's), until a renewal is confirmed.
	 */
	private volatile long periodNanos;

	/**
	 * @param sentNanos when the acquire that granted the lease was sent
	 * @param grantedNanos the lease the acquire granted (already capped by max-hold)
	 * @param capNanos the max-hold cap as an absolute {@code nanoTime}, or
	 * {@code Long.MAX_VALUE}
	 */
	RenewalSchedule(long leaseNanos, long sentNanos, long grantedNanos, long capNanos, LongUnaryOperator drift) {
		this.leaseNanos = leaseNanos;
		this.drift = drift;
		this.lastSentNanos = sentNanos;
		this.deadlineNanos = sentNanos + grantedNanos - drift.applyAsLong(grantedNanos);
		// the grant is whole milliseconds: a cap within one of it set it
		boolean capSetIt = capNanos != Long.MAX_VALUE
				&& capNanos - sentNanos - grantedNanos < TimeUnit.MILLISECONDS.toNanos(1);
		this.capped = grantedNanos < leaseNanos && capSetIt;
		this.periodNanos = ((grantedNanos < leaseNanos && !capSetIt) ? grantedNanos : leaseNanos) / 3;
	}

	long deadlineNanos() {
		return this.deadlineNanos;
	}

	long lastSentNanos() {
		return this.lastSentNanos;
	}

	boolean renewing() {
		return this.renewing;
	}

	String error() {
		return this.error;
	}

	/** From the last renewal sent to the next one. */
	long periodNanos() {
		return this.periodNanos;
	}

	/** Whether the max-hold cap limited the latest grant: the lease ends by the cap. */
	boolean capped() {
		return this.capped;
	}

	/**
	 * @param capped whether the max-hold cap limits what this renewal asks for
	 */
	void sent(long sentNanos, boolean capped) {
		this.capped = this.capped || capped;
		this.renewing = true;
		this.lastSentNanos = sentNanos;
	}

	/**
	 * A renewal sent at {@code sentNanos} granted {@code grantedNanos}: the key now
	 * expires no earlier than that, and no later than the storage's own cap.
	 * @param held whether the lease is still held (only then the deadline moves)
	 */
	void confirmed(long sentNanos, long grantedNanos, boolean held) {
		this.renewing = false;
		this.error = null;
		this.periodNanos = this.leaseNanos / 3;
		if (held) {
			long deadline = sentNanos + grantedNanos - this.drift.applyAsLong(grantedNanos);
			// an extension sent after this renewal may have reached the storage before it
			// (Redlock's nodes answer in any order): the earlier end is the safe one
			boolean extendedSince = this.extendedSentNanos != NOT_EXTENDED && this.extendedSentNanos - sentNanos > 0;
			this.deadlineNanos = extendedSince ? Math.min(this.deadlineNanos, deadline) : deadline;
		}
	}

	/** Whether an extension set the lease. */
	boolean extended() {
		return this.extendedUntilNanos != NOT_EXTENDED;
	}

	/**
	 * What a renewal sent at {@code sentNanos} asks for: the lease, or what remains of
	 * the latest extension when that is longer.
	 */
	long renewalNanos(long sentNanos) {
		long extended = this.extendedUntilNanos;
		return (extended == NOT_EXTENDED) ? this.leaseNanos : Math.max(this.leaseNanos, extended - sentNanos);
	}

	/**
	 * An extension sent at {@code sentNanos} set the lease to {@code grantedNanos} from
	 * then: the deadline moves there (earlier, too), and a renewed lease is next renewed
	 * a third of the shorter of the two leases later, never shortening the extension.
	 * @param capped whether the max-hold cap limited the grant
	 */
	void extended(long sentNanos, long grantedNanos, boolean capped) {
		this.extendedSentNanos = sentNanos;
		this.extendedUntilNanos = sentNanos + grantedNanos;
		this.deadlineNanos = sentNanos + grantedNanos - this.drift.applyAsLong(grantedNanos);
		this.capped = this.capped || capped;
		this.error = null;
		this.lastSentNanos = sentNanos;
		this.periodNanos = Math.min(grantedNanos, this.leaseNanos) / 3;
	}

	/** The renewal got no extension (max-hold reached); the deadline stays. */
	void cappedNow() {
		this.capped = true;
		this.renewing = false;
		this.error = null;
	}

	/** A renewal was answered without a grant (the key is gone). */
	void answered() {
		this.renewing = false;
	}

	/**
	 * The storage may end the lease by {@code deadlineNanos} (an extension that got no
	 * answer may have shortened it): the local deadline is never later.
	 */
	void mayEndBy(long deadlineNanos) {
		this.deadlineNanos = Math.min(this.deadlineNanos, deadlineNanos);
	}

	/** A renewal failed to reach the storage: it is due again at once. */
	void failed(String error) {
		this.renewing = false;
		this.error = error;
		this.lastSentNanos -= this.leaseNanos;
	}

}
