package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;

import io.lockstep.LockException;

/**
 * The acquisition protocol of one lock by one caller, as a pure state machine: no I/O, no
 * threads, no clock of its own. It takes {@link Event events} (an attempt's reply or
 * failure, the local queue's registration, a hand-off message, a release notification, a
 * promotion to the key's head, a timer, an abort) with the time they are handled, and
 * answers with a {@link Step}: what to undo, and the next {@link Action} (send an
 * attempt, join a key's local queue, wait, or be done). {@link BlockingAcquirer} runs it
 * on the caller's thread, {@link AsyncAcquirer} with futures and a timer; each feeds one
 * event at a time.
 *
 * <p>
 * The rules it keeps, whatever the order of events:
 * <ul>
 * <li>Only a key's local head asks the storage while other local callers wait for it; the
 * others wait until a release, a promotion or the end of their wait. The key's first
 * local caller asks at once (queued already where the client hears hand-offs).</li>
 * <li>The lock is taken only from a grant to the current owner token: a reply that
 * granted it, or a hand-off to that token. A hand-off is counted from the send time of
 * the last attempt whose reply left the owner queued before the hand-off came (the grant
 * followed it); one that would leave less than half its lease is confirmed by one more
 * attempt first.</li>
 * <li>Only a lock held by another owner is waited for: a failed attempt (the storage
 * refused it, failed or did not answer in time) ends the acquisition at once with its
 * failure, whatever is left of the wait. The attempt is undone (it may still run later),
 * and leaves the queue when it may have queued the owner.</li>
 * <li>Every ending undoes what may be held or queued under the owner token: a queue
 * entry, a hand-off not taken, an attempt on its way.</li>
 * </ul>
 */
final class Acquisition {

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

	/** Release (and, with {@code leave}, leave the queue) under the owner token. */
	record Undo(String owner, boolean leave) {
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

	/** How long a queue entry lives unless its waiter asks again. */
	static final long QUEUE_ENTRY_MILLIS = 2000;

	/** The head's longest wait while notified, in case a notification was lost. */
	static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final Terms terms;

	private Phase phase = Phase.ASKING;

	private long start;

	private String owner;

	/** Whether it holds the first caller's asking gate. */
	private boolean asking;

	private String registeredKey;

	private boolean head;

	private boolean inFlight;

	private long sentNanos;

	private long sentEntryMillis;

	/** Whether a reply left the owner queued (until it leaves the queue). */
	private boolean queued;

	/** The send time of the last attempt whose reply left the owner queued. */
	private long queuedSent;

	/** The fencing counter that reply told, or -1: older hand-offs are stale. */
	private long queuedCounter = -1;

	/** A hand-off that came while an attempt was on its way. */
	private HandedOff pendingHandOff;

	/** What a pending hand-off counts from when the attempt's reply does not tell. */
	private long pendingAnchor;

	/** A release or promotion came while it asked: ask again at once. */
	private boolean again;

	private long holderTtlMillis = -1;

	private Wait waiting;

	private long timers;

	private long pollNanos = MIN_POLL_NANOS;

	Acquisition(Terms terms) {
		this.terms = terms;
	}

	Phase phase() {
		return this.phase;
	}

	String owner() {
		return this.owner;
	}

	/**
	 * @param firstCaller whether it took the key's asking gate (no local caller asks for
	 * or waits for the key)
	 * @param hearsHandOffs whether hand-offs of the key reach this client already
	 */
	Step start(long now, boolean firstCaller, boolean hearsHandOffs) {
		this.start = now;
		this.owner = this.terms.tokens().get();
		if (this.terms.id().keys().size() == 1 && this.terms.waitNanos() > 0) {
			if (!firstCaller) {
				return register(this.terms.id().keys().get(0));
			}
			this.asking = true;
			return send(now, this.terms.handOff() && hearsHandOffs);
		}
		return send(now, false);
	}

	/** The next step after the event; an ended acquisition ignores every event. */
	Step on(Event event, long now) {
		if (this.phase.isEnded()) {
			return new Step(false, null, null);
		}
		if (event instanceof Aborted aborted) {
			return abort(aborted.reason());
		}
		if (event instanceof HandedOff handedOff) {
			return handedOff(handedOff, now);
		}
		if (event instanceof Granted granted && this.phase == Phase.ASKING) {
			return granted(granted, now);
		}
		if (event instanceof Held held && this.phase == Phase.ASKING) {
			return held(held, now);
		}
		if (event instanceof AttemptFailed failed && this.phase == Phase.ASKING) {
			return failed(failed.failure());
		}
		if (event instanceof Registered registered && this.phase == Phase.REGISTERING) {
			this.head = this.head || registered.head();
			return (this.again || (this.head && !this.queued)) ? send(now, this.head) : await(now);
		}
		if (event instanceof Promoted) {
			this.head = true;
		}
		if (event instanceof Released || event instanceof Promoted) {
			if (this.phase == Phase.WAITING) {
				return send(now, this.head);
			}
			this.again = true;
			return unchanged();
		}
		if (event instanceof TimerFired fired && this.waiting != null && fired.timer() == this.waiting.timer()) {
			return send(now, this.head);
		}
		return unchanged();
	}

	private Step granted(Granted granted, long now) {
		long asked = TimeUnit.MILLISECONDS.toNanos(this.terms.grantedMillis());
		long lease = (granted.grantedMillis() >= 0) ? TimeUnit.MILLISECONDS.toNanos(granted.grantedMillis()) : asked;
		if (this.sentNanos + lease - this.terms.drift().applyAsLong(lease) - now <= 0) {
			// the reply came after the lease it granted: the key may be another's now
			return failed(new LockException(
					"the storage granted it, but its reply came after the lease it granted " + "ran out"));
		}
		this.inFlight = false;
		long cap = cap(this.sentNanos);
		if (lease < asked && cap != Long.MAX_VALUE) {
			// the key's max-hold cap set the lease (a lock handed to it earlier)
			cap = Math.min(cap, this.sentNanos + lease);
		}
		return done(Phase.ACQUIRED, new Grant(this.owner, granted.fencingTokens(), this.sentNanos, lease, cap), null,
				null);
	}

	private Step held(Held held, long now) {
		this.inFlight = false;
		if (this.sentEntryMillis > 0 && this.terms.handOff()) {
			this.queued = true;
			this.queuedSent = this.sentNanos;
			this.queuedCounter = held.fencingCounter();
		}
		this.holderTtlMillis = held.holderTtlMillis();
		HandedOff pending = this.pendingHandOff;
		this.pendingHandOff = null;
		if (pending != null && held.fencingCounter() < 0) {
			return takeHandOff(pending, this.pendingAnchor, now);
		}
		if (pending != null && pending.fencingToken() > held.fencingCounter()) {
			// granted after this attempt ran
			return takeHandOff(pending, this.sentNanos, now);
		}
		if (now - this.start >= this.terms.waitNanos()) {
			return done(Phase.TIMED_OUT, null, null, leaveIfQueued());
		}
		String blocking = this.terms.id().keys().get(Math.max(0, held.blockingIndex()));
		if (!blocking.equals(this.registeredKey)) {
			return register(blocking);
		}
		return this.again ? send(now, this.head) : await(now);
	}

	/**
	 * Ends the acquisition with the attempt's failure: only a lock held by another owner
	 * is worth waiting for. What the attempt may have taken or queued is undone under the
	 * owner token it was sent with.
	 */
	private Step failed(LockException failure) {
		boolean mayBeQueued = this.terms.handOff() && (this.sentEntryMillis > 0 || this.queued);
		LockException reported = new LockException(
				"Could not acquire lock '" + this.terms.id().display() + "': " + failure.getMessage(), failure);
		return done(Phase.FAILED, null, reported, new Undo(this.owner, mayBeQueued));
	}

	private Step handedOff(HandedOff handOff, long now) {
		if (!handOff.owner().equals(this.owner)) {
			// to an owner token it left: released by that leave
			return unchanged();
		}
		if (this.phase == Phase.ASKING) {
			// counted from before the attempt on its way: the grant may precede it
			if (this.queued || (this.sentEntryMillis > 0 && this.terms.handOff())) {
				this.pendingHandOff = handOff;
				this.pendingAnchor = this.queued ? this.queuedSent : this.sentNanos;
			}
			return unchanged();
		}
		if (!this.queued || handOff.fencingToken() < this.queuedCounter) {
			// not queued, or granted before a reply that found the key another's: gone
			return unchanged();
		}
		return takeHandOff(handOff, this.queuedSent, now);
	}

	/** Takes a hand-off, or confirms it by one more attempt when little of it is left. */
	private Step takeHandOff(HandedOff handOff, long anchor, long now) {
		this.pendingHandOff = null;
		long lease = TimeUnit.MILLISECONDS.toNanos(handOff.leaseMillis());
		long deadline = anchor + lease - this.terms.drift().applyAsLong(lease);
		if (deadline - now < lease / 2) {
			// the storage refreshes a lease it handed to the owner, from this attempt on
			return send(now, true);
		}
		long[] fences = { handOff.fencingToken() };
		return done(Phase.ACQUIRED, new Grant(this.owner, fences, anchor, lease, cap(anchor)), null, null);
	}

	private Step abort(LockException reason) {
		Undo undo = this.inFlight ? new Undo(this.owner, true) : leaveIfQueued();
		return done(Phase.ABORTED, null, reason, undo);
	}

	private Undo leaveIfQueued() {
		return (this.queued || this.pendingHandOff != null) ? new Undo(this.owner, true) : null;
	}

	private Step send(long now, boolean queue) {
		long leftMillis = TimeUnit.NANOSECONDS.toMillis(this.terms.waitNanos() - (now - this.start));
		long entry = (queue && leftMillis > 0) ? Math.min(leftMillis, QUEUE_ENTRY_MILLIS) : 0;
		this.phase = Phase.ASKING;
		this.inFlight = true;
		this.again = false;
		this.waiting = null;
		this.sentNanos = now;
		this.sentEntryMillis = entry;
		return step(null, new Send(this.owner, entry, this.queued));
	}

	private Step register(String key) {
		this.phase = Phase.REGISTERING;
		this.registeredKey = key;
		this.head = false;
		this.waiting = null;
		return step(null, new Register(key, this.owner, this.terms.handOff()));
	}

	/** Waits for its turn: the head re-checks by the holder's lease or periodically. */
	private Step await(long now) {
		this.phase = Phase.WAITING;
		long deadline = this.start + this.terms.waitNanos();
		long until = this.head ? Math.min(deadline, now + headWait()) : deadline;
		return step(null, newWait(until));
	}

	private long headWait() {
		long wait = Long.MAX_VALUE;
		if (this.holderTtlMillis >= 0) {
			wait = TimeUnit.MILLISECONDS.toNanos(this.holderTtlMillis) + 1_000_000L;
		}
		if (!this.terms.notifies().getAsBoolean()) {
			wait = Math.min(wait, this.terms.jitter().applyAsLong(this.pollNanos));
			this.pollNanos = Math.min(MAX_POLL_NANOS, this.pollNanos * 2);
			return wait;
		}
		return Math.min(wait, RECHECK_NANOS);
	}

	private Wait newWait(long untilNanos) {
		this.waiting = new Wait(untilNanos, ++this.timers);
		return this.waiting;
	}

	/** Nothing new to do: the wait (if waiting) goes on. */
	private Step unchanged() {
		return new Step(false, null, this.waiting);
	}

	private Step done(Phase end, Grant grant, LockException failure, Undo undo) {
		this.phase = end;
		this.waiting = null;
		this.inFlight = false;
		return step(undo, new Done(end, grant, failure));
	}

	private Step step(Undo undo, Action action) {
		boolean endAsking = this.asking && !this.inFlight;
		if (endAsking) {
			this.asking = false;
		}
		return new Step(endAsking, undo, action);
	}

	private long cap(long from) {
		return (this.terms.maxHoldNanos() != Long.MAX_VALUE) ? from + this.terms.maxHoldNanos() : Long.MAX_VALUE;
	}

}
