package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;

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
final class Acquisition implements AcquisitionProtocol {

	/** How long a queue entry lives unless its waiter asks again. */
	static final long QUEUE_ENTRY_MILLIS = 2000;

	private final Terms terms;

	private Phase phase = Phase.ASKING;

	private long start;

	/** When the event being handled is handled. */
	private long now;

	private String owner;

	/** Whether it holds the first caller's asking gate. */
	private boolean asking;

	private String registeredKey;

	private boolean head;

	private boolean inFlight;

	private long sentNanos;

	private long sentEntryMillis;

	/** Its queue entry in storage and the hand-offs to it. */
	private final QueuedOwner queue = new QueuedOwner();

	/** A release or promotion came while it asked: ask again at once. */
	private boolean again;

	private long holderTtlMillis = -1;

	private Wait waiting;

	private long timers;

	/** How long the head waits before it asks again. */
	private final HeadWait headWait;

	Acquisition(Terms terms) {
		this.terms = terms;
		this.headWait = new HeadWait(terms.notifies(), terms.jitter());
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
		this.now = now;
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
		this.now = now;
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
			return (this.again || (this.head && !this.queue.queued())) ? send(now, this.head) : await(now);
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
			this.queue.queuedBy(this.sentNanos, held.fencingCounter());
		}
		this.holderTtlMillis = held.holderTtlMillis();
		QueuedOwner.Take pending = this.queue.settle(held.fencingCounter(), this.sentNanos);
		if (pending != null) {
			return takeHandOff(pending.handOff(), pending.anchor(), now);
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
		boolean mayBeQueued = this.terms.handOff() && (this.sentEntryMillis > 0 || this.queue.queued())
				|| this.terms.id().size() > 1 && this.sentEntryMillis > 0;
		LockException reported = new LockException(
				"Could not acquire lock '" + this.terms.id().display() + "': " + failure.getMessage(), failure);
		return done(Phase.FAILED, null, reported, undo(mayBeQueued));
	}

	private Step handedOff(HandedOff handOff, long now) {
		if (!handOff.owner().equals(this.owner)) {
			// to an owner token it left: released by that leave
			return unchanged();
		}
		if (this.phase == Phase.ASKING) {
			// counted from before the attempt on its way: the grant may precede it
			this.queue.arrivedWhileAsking(handOff, this.sentEntryMillis > 0 && this.terms.handOff(), this.sentNanos);
			return unchanged();
		}
		if (!this.queue.current(handOff)) {
			// not queued, or granted before a reply that found the key another's: gone
			return unchanged();
		}
		return takeHandOff(handOff, this.queue.queuedSent(), now);
	}

	/** Takes a hand-off, or confirms it by one more attempt when little of it is left. */
	private Step takeHandOff(HandedOff handOff, long anchor, long now) {
		this.queue.clearPending();
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
		Undo undo = this.inFlight ? undo(true) : leaveIfQueued();
		return done(Phase.ABORTED, null, reason, undo);
	}

	private Undo leaveIfQueued() {
		// a writer on several keys that waited may have marked keys readers hold
		boolean marked = this.terms.id().size() > 1 && this.sentEntryMillis > 0;
		return (this.queue.queued() || this.queue.hasPending() || marked) ? undo(true) : null;
	}

	/**
	 * Undoes what may be held or queued under the owner token, sent again until it lands
	 * or twice the lease has passed (at least a lease and a queue entry's life): an
	 * attempt on its way runs no later than its command timeout (at most a third of the
	 * lease) from now, what it takes lasts a lease, and a queue entry or a hand-off to it
	 * no longer.
	 */
	private Undo undo(boolean leave) {
		long lease = TimeUnit.MILLISECONDS.toNanos(this.terms.grantedMillis());
		long entry = TimeUnit.MILLISECONDS.toNanos(QUEUE_ENTRY_MILLIS);
		return new Undo(this.owner, leave, this.now + lease + Math.max(lease, entry));
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
		return step(null, new Send(this.owner, entry, this.queue.queued()));
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
		long until = this.head ? Math.min(deadline, now + this.headWait.next(this.holderTtlMillis)) : deadline;
		return step(null, newWait(until));
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
