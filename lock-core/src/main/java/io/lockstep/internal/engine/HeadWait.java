package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;

/**
 * How long a key's local head waits before it asks the storage again: until the holder's
 * lease runs out, and, while release notifications work, at most the
 * {@link WaitPolicy#headRecheck} in case one was lost; without notifications it polls,
 * from the {@link WaitPolicy#firstPoll} doubling to the {@link WaitPolicy#longestPoll},
 * jittered. Owned by one {@link Acquisition}.
 */
final class HeadWait {

	/** The head's longest wait while notified, in case a notification was lost. */
	private final long recheckNanos;

	private final long maxPollNanos;

	private final BooleanSupplier notifies;

	private final LongUnaryOperator jitter;

	private long pollNanos;

	HeadWait(WaitPolicy waits, BooleanSupplier notifies, LongUnaryOperator jitter) {
		this.recheckNanos = waits.headRecheck().toNanos();
		this.pollNanos = waits.firstPoll().toNanos();
		this.maxPollNanos = waits.longestPoll().toNanos();
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
			this.pollNanos = Math.min(this.maxPollNanos, this.pollNanos * 2);
			return wait;
		}
		return Math.min(wait, this.recheckNanos);
	}

}
