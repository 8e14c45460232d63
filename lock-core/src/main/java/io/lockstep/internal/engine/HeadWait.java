package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;

/**
 * How long a key's local head waits before it asks the storage again: until the holder's
 * lease runs out, and, while release notifications work, at most {@link #RECHECK_NANOS}
 * in case one was lost; without notifications it polls, from {@code 5 ms} doubling to
 * {@code 100 ms}, jittered. Owned by one {@link Acquisition}.
 */
final class HeadWait {

	/** The head's longest wait while notified, in case a notification was lost. */
	static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final BooleanSupplier notifies;

	private final LongUnaryOperator jitter;

	private long pollNanos = MIN_POLL_NANOS;

	HeadWait(BooleanSupplier notifies, LongUnaryOperator jitter) {
		this.notifies = notifies;
		this.jitter = jitter;
	}

	/**
	 * The next wait, in ns.
	 * @param holderTtlMillis the holder's remaining lease the last attempt saw, or
	 * negative when unknown
	 */
	long next(long holderTtlMillis) {
		long wait = Long.MAX_VALUE;
		if (holderTtlMillis >= 0) {
			wait = TimeUnit.MILLISECONDS.toNanos(holderTtlMillis) + 1_000_000L;
		}
		if (!this.notifies.getAsBoolean()) {
			wait = Math.min(wait, this.jitter.applyAsLong(this.pollNanos));
			this.pollNanos = Math.min(MAX_POLL_NANOS, this.pollNanos * 2);
			return wait;
		}
		return Math.min(wait, RECHECK_NANOS);
	}

}
