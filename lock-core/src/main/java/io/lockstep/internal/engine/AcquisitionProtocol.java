package io.lockstep.internal.engine;

import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;

import io.lockstep.LockException;

/**
 * The vocabulary of the acquisition protocol: the {@link Phase phases} of an
 * {@link Acquisition}, the {@link Event events} it takes, and the {@link Step steps} and
 * {@link Action actions} it answers with. The machine and its drivers speak it; a type of
 * its own so that the machine itself stays short.
 */
interface AcquisitionProtocol {

	enum Phase {

		ASKING, REGISTERING, WAITING, ACQUIRED, TIMED_OUT, FAILED, ABORTED;

		boolean isEnded() {
			return ordinal() >= ACQUIRED.ordinal();
		}

	}

	/** What happened. */
	sealed interface Event
			permits Granted, Held, AttemptFailed, Registered, HandedOff, Released, Promoted, TimerFired, Aborted {

	}

	/**
	 * The attempt got every key.
	 *
	 * @param grantedMillis the lease the storage set, or negative for the whole lease
	 * asked
	 */
	record Granted(long[] fencingTokens, long grantedMillis) implements Event {
	}

	/**
	 * Another owner holds a key: the longest remaining lease, which key blocks, and the
	 * key's fencing counter as the attempt left it (-1: unknown); a hand-off granted
	 * after the attempt has a larger fencing token.
	 */
	record Held(long holderTtlMillis, int blockingIndex, long fencingCounter) implements Event {
	}

	/**
	 * The attempt failed or timed out; it may still run later. It ends the acquisition.
	 */
	record AttemptFailed(LockException failure) implements Event {
	}

	/** It joined the key's local queue; {@code head}: it is the first of its kind. */
	record Registered(boolean head) implements Event {
	}

	/** The storage handed the lock to a queued owner token. */
	record HandedOff(String owner, long fencingToken, long leaseMillis) implements Event {
	}

	/** A release of the key it waits for. */
	record Released() implements Event {
	}

	/** It became the head of the key's local queue. */
	record Promoted() implements Event {
	}

	/** The timer of the {@link Wait} with this number ran out. */
	record TimerFired(long timer) implements Event {
	}

	/** Cancelled, interrupted, or the client closed. */
	record Aborted(LockException reason) implements Event {
	}

	/** What the driver does next. */
	sealed interface Action permits Send, Register, Wait, Done {

	}

	/**
	 * One attempt for the owner token.
	 *
	 * @param entryMillis how long a queue entry lives (0: the attempt does not queue)
	 * @param queued whether an earlier attempt of the owner may have queued it
	 */
	record Send(String owner, long entryMillis, boolean queued) implements Action {
	}

	/** Join the key's local queue (leaving the one it is in). */
	record Register(String key, String owner, boolean handOff) implements Action {
	}

	/** Wait for an event, at most until then; the timer then fires with this number. */
	record Wait(long untilNanos, long timer) implements Action {
	}

	/** The end: {@code grant} when acquired, {@code failure} when failed or aborted. */
	record Done(Phase phase, Grant grant, LockException failure) implements Action {
	}

	/**
	 * The lock granted to the owner token: the lease counts from {@code sentNanos}, and
	 * no renewal extends it past {@code capNanos}.
	 */
	record Grant(String owner, long[] fencingTokens, long sentNanos, long grantedNanos, long capNanos) {
	}

	/**
	 * Release (and, with {@code leave}, leave the queue) under the owner token; sent
	 * again each time it does not land (a dropped connection loses what it had not
	 * written) until {@code untilNanos}, by when whatever it gives back has expired.
	 */
	record Undo(String owner, boolean leave, long untilNanos) {
	}

	/**
	 * The answer to an event: end the first caller's asking gate, undo, then the action
	 * ({@code null}: go on as before).
	 */
	record Step(boolean endAsking, Undo undo, Action action) {
	}

	/**
	 * What the protocol needs to know of the lock and the storage.
	 *
	 * @param id the lock
	 * @param waitNanos how long to wait while another owner holds the lock
	 * @param grantedMillis the lease an attempt asks for
	 * @param maxHoldNanos the max-hold cap, or {@code Long.MAX_VALUE}
	 * @param handOff whether the storage hands this lock to a queued owner (a one-key
	 * lock on a storage that hands off)
	 * @param notifies whether release notifications work now (else the head polls)
	 * @param drift the storage's clock-drift allowance of a lease
	 * @param tokens new owner tokens
	 * @param jitter a random delay in {@code [max / 2, max]} for a given max (the polling
	 * of a head that is not notified)
	 */
	record Terms(LockId id, long waitNanos, long grantedMillis, long maxHoldNanos, boolean handOff,
			BooleanSupplier notifies, LongUnaryOperator drift, Supplier<String> tokens, LongUnaryOperator jitter) {
	}

}
