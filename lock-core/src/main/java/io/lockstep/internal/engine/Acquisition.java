package io.lockstep.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.lockstep.LockException;
import org.jspecify.annotations.Nullable;

/**
 * The acquisition protocol of one lock by one caller, as a pure state machine: no I/O, no
 * threads, no clock of its own. It takes {@link Event events} (an attempt's reply or
 * failure, the local queue's registration, a hand-off message, a release notification, a
 * promotion to the key's head, a timer, an abort) with the time they are handled, and
 * answers with a list of {@link Effect effects}: what to end and undo, and the next
 * action (send an attempt, join a key's local queue, wait, or be done); an empty list
 * when nothing is new. {@link BlockingAcquirer} runs it on the caller's thread,
 * {@link AsyncAcquirer} with futures and a timer; each feeds one event at a time.
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
 *
 * <p>
 * Over 300 lines for a reason: the protocol's vocabulary (its phases, events and effects,
 * the asking gate it is given) and every transition are in this one file, which the
 * exploration tests check exhaustively.
 */
final class Acquisition {

	enum Phase {

		ASKING, REGISTERING, WAITING, ACQUIRED, TIMED_OUT, FAILED, ABORTED;

		boolean isEnded() {
			return ordinal() >= ACQUIRED.ordinal();
		}

	}

	/** What happened. */
	sealed interface Event permits Granted, Held, AttemptFailed, Registered, HandedOff, HandedOffHere, Released,
			Promoted, PromotedBehind, TimerFired, Aborted {

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

	/**
	 * A release by this client handed the lock to the owner token, named as its
	 * successor: the lease counts from {@code sentNanos}, when that release was sent.
	 */
	record HandedOffHere(String owner, long fencingToken, long leaseMillis, long sentNanos) implements Event {
	}

	/** A release of the key it waits for. */
	record Released() implements Event {
	}

	/** It became the head of the key's local queue. */
	record Promoted() implements Event {
	}

	/**
	 * It became the head of the key's local queue behind a holder of this client, whose
	 * release may hand it the lock ({@link HandedOffHere}) or else promote it.
	 */
	record PromotedBehind() implements Event {
	}

	/** The timer of the {@link Wait} with this number ran out. */
	record TimerFired(long timer) implements Event {
	}

	/** Cancelled, interrupted, or the client closed. */
	record Aborted(LockException reason) implements Event {
	}

	/**
	 * What the driver does, in the order given: {@link EndGate} and {@link Undo} at once,
	 * then at most one action ({@link Send}, {@link Register}, {@link Wait} or
	 * {@link Done}) that replaces the one before it. An answer without an action leaves
	 * the driver doing what it did (an empty answer: nothing new).
	 */
	sealed interface Effect permits EndGate, Undo, Send, Register, Wait, Done {

		/**
		 * Whether it replaces what the driver does (else it is done at once, on the
		 * side).
		 */
		default boolean isAction() {
			return true;
		}

	}

	/**
	 * End the key's asking gate: the caller that took it (see {@link Gate#begin}) asks no
	 * more; the key's next caller may ask at once.
	 */
	record EndGate(String key) implements Effect {

		@Override
		public boolean isAction() {
			return false;
		}

	}

	/**
	 * One attempt for the owner token.
	 *
	 * @param entryMillis how long a queue entry lives (0: the attempt does not queue)
	 * @param queued whether an earlier attempt of the owner may have queued it
	 * @param rearm whether it waits in a local queue: the next release wakes it again
	 */
	record Send(String owner, long entryMillis, boolean queued, boolean rearm) implements Effect {
	}

	/** Join the key's local queue (leaving the one it is in). */
	record Register(String key, String owner, boolean handOff) implements Effect {
	}

	/** Wait for an event, at most until then; the timer then fires with this number. */
	record Wait(long untilNanos, long timer) implements Effect {
	}

	/** The end: {@code grant} when acquired, {@code failure} when failed or aborted. */
	record Done(Phase phase, Grant grant, LockException failure) implements Effect {
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
	record Undo(String owner, boolean leave, long untilNanos) implements Effect {

		@Override
		public boolean isAction() {
			return false;
		}

	}

	/**
	 * The key's asking gate, as the driver's local queues keep it: only one local caller
	 * of a key asks the storage while no other waits for it.
	 *
	 * @param begin takes the key's asking gate when no local caller asks for or waits for
	 * the key; whether it took it ({@link EndGate} ends it)
	 * @param hearsHandOffs whether hand-offs of the key reach this client already
	 */
	record Gate(Predicate<String> begin, Predicate<String> hearsHandOffs) {
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
	 */
	record Terms(LockId id, long waitNanos, long grantedMillis, long maxHoldNanos, boolean handOff) {
	}

	/**
	 * What the protocol reads from outside, injected so that it stays pure.
	 *
	 * @param notifies whether release notifications work now (else the head polls)
	 * @param drift the storage's clock-drift allowance of a lease
	 * @param tokens new owner tokens
	 * @param jitter a random delay in {@code [max / 2, max]} for a given max (the polling
	 * of a head that is not notified)
	 */
	record Inputs(BooleanSupplier notifies, LongUnaryOperator drift, Supplier<String> tokens,
			LongUnaryOperator jitter) {
	}

	private final Terms terms;

	private final Inputs inputs;

	/** How long a queue entry lives unless its waiter asks again. */
	private final long queueEntryMillis;

	private Phase phase = Phase.ASKING;

	/** How it ended, once it has. */
	private @Nullable Done ending;

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

	Acquisition(Terms terms, Inputs inputs, WaitPolicy waits) {
		this.terms = terms;
		this.inputs = inputs;
		this.queueEntryMillis = waits.queueEntry().toMillis();
		this.headWait = new HeadWait(waits, inputs.notifies(), inputs.jitter());
	}

	Phase phase() {
		return this.phase;
	}

	String owner() {
		return this.owner;
	}

	/**
	 * The first effects. A caller of one key that may wait asks at once only when it is
	 * the key's first local caller: an exclusive caller that takes the key's asking gate
	 * (queued already where the client hears hand-offs), or any caller of a share (every
	 * one asks for a share); else it joins the key's local queue.
	 */
	List<Effect> start(long now, Gate gate) {
		this.start = now;
		this.now = now;
		this.owner = this.inputs.tokens().get();
		if (this.terms.id().keys().size() == 1 && this.terms.waitNanos() > 0) {
			String key = this.terms.id().first();
			if (this.terms.id().sharing().exclusive()) {
				if (!gate.begin().test(key)) {
					return register(key);
				}
				this.asking = true;
			}
			return send(now, this.terms.handOff() && gate.hearsHandOffs().test(key));
		}
		return send(now, false);
	}

	/** The effects of the event; an ended acquisition ignores every event. */
	List<Effect> on(Event event, long now) {
		this.now = now;
		if (this.phase.isEnded()) {
			return List.of();
		}
		if (event instanceof Aborted aborted) {
			return abort(aborted.reason());
		}
		if (event instanceof HandedOff handedOff) {
			return handedOff(handedOff, now);
		}
		if (event instanceof HandedOffHere handedOff) {
			return handedOffHere(handedOff, now);
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
		if (event instanceof PromotedBehind) {
			// the head, without asking: the holder's release tells it
			this.head = true;
			return (this.phase == Phase.WAITING) ? await(now) : unchanged();
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

	private List<Effect> granted(Granted granted, long now) {
		long asked = TimeUnit.MILLISECONDS.toNanos(this.terms.grantedMillis());
		long lease = (granted.grantedMillis() >= 0) ? TimeUnit.MILLISECONDS.toNanos(granted.grantedMillis()) : asked;
		if (this.sentNanos + lease - this.inputs.drift().applyAsLong(lease) - now <= 0) {
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

	private List<Effect> held(Held held, long now) {
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
	private List<Effect> failed(LockException failure) {
		boolean mayBeQueued = this.terms.handOff()
				&& (this.sentEntryMillis > 0 || this.queue.queued() || this.queue.hasPending())
				|| this.terms.id().size() > 1 && this.sentEntryMillis > 0;
		LockException reported = new LockException(
				"Could not acquire lock '" + this.terms.id().display() + "': " + failure.getMessage(), failure);
		return done(Phase.FAILED, null, reported, undo(mayBeQueued));
	}

	private List<Effect> handedOff(HandedOff handOff, long now) {
		if (!handOff.owner().equals(this.owner)) {
			// to an owner token it left: released by that leave
			return unchanged();
		}
		if (this.phase == Phase.ASKING) {
			// counted from before the attempt on its way: the grant may precede it
			this.queue.arrivedWhileAsking(handOff(handOff), this.sentEntryMillis > 0 && this.terms.handOff(),
					this.sentNanos);
			return unchanged();
		}
		if (!this.queue.current(handOff(handOff))) {
			// not queued, or granted before a reply that found the key another's: gone
			return unchanged();
		}
		return takeHandOff(handOff(handOff), this.queue.queuedSent(), now);
	}

	/**
	 * Takes a hand-off by a release of this client, counted from when that release was
	 * sent; one that comes while an attempt is on its way waits for its reply (which
	 * finds the lock the owner's).
	 */
	private List<Effect> handedOffHere(HandedOffHere handOff, long now) {
		if (!handOff.owner().equals(this.owner)) {
			return unchanged();
		}
		QueuedOwner.HandOff handed = new QueuedOwner.HandOff(handOff.fencingToken(), handOff.leaseMillis());
		if (this.phase == Phase.ASKING) {
			this.queue.arrivedHere(handed, handOff.sentNanos());
			return unchanged();
		}
		return takeHandOff(handed, handOff.sentNanos(), now);
	}

	private static QueuedOwner.HandOff handOff(HandedOff handedOff) {
		return new QueuedOwner.HandOff(handedOff.fencingToken(), handedOff.leaseMillis());
	}

	/** Takes a hand-off, or confirms it by one more attempt when little of it is left. */
	private List<Effect> takeHandOff(QueuedOwner.HandOff handOff, long anchor, long now) {
		this.queue.clearPending();
		long lease = TimeUnit.MILLISECONDS.toNanos(handOff.leaseMillis());
		long deadline = anchor + lease - this.inputs.drift().applyAsLong(lease);
		if (deadline - now < lease / 2) {
			// the storage refreshes a lease it handed to the owner, from this attempt on
			return send(now, true);
		}
		long[] fences = { handOff.fencingToken() };
		return done(Phase.ACQUIRED, new Grant(this.owner, fences, anchor, lease, cap(anchor)), null, null);
	}

	private List<Effect> abort(LockException reason) {
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
		long entry = TimeUnit.MILLISECONDS.toNanos(this.queueEntryMillis);
		return new Undo(this.owner, leave, this.now + lease + Math.max(lease, entry));
	}

	private List<Effect> send(long now, boolean queue) {
		long leftMillis = TimeUnit.NANOSECONDS.toMillis(this.terms.waitNanos() - (now - this.start));
		long entry = (queue && leftMillis > 0) ? Math.min(leftMillis, this.queueEntryMillis) : 0;
		this.phase = Phase.ASKING;
		this.inFlight = true;
		this.again = false;
		this.waiting = null;
		this.sentNanos = now;
		this.sentEntryMillis = entry;
		return step(null, new Send(this.owner, entry, this.queue.queued(), this.registeredKey != null));
	}

	private List<Effect> register(String key) {
		this.phase = Phase.REGISTERING;
		this.registeredKey = key;
		this.head = false;
		this.waiting = null;
		return step(null, new Register(key, this.owner, this.terms.handOff()));
	}

	/** Waits for its turn: the head re-checks by the holder's lease or periodically. */
	private List<Effect> await(long now) {
		this.phase = Phase.WAITING;
		long deadline = this.start + this.terms.waitNanos();
		long until = this.head ? Math.min(deadline, now + this.headWait.next(this.holderTtlMillis)) : deadline;
		return step(null, newWait(until));
	}

	private Wait newWait(long untilNanos) {
		this.waiting = new Wait(untilNanos, ++this.timers);
		return this.waiting;
	}

	/** Nothing new: what the driver does (a wait, an attempt on its way) goes on. */
	private List<Effect> unchanged() {
		return List.of();
	}

	private List<Effect> done(Phase end, Grant grant, LockException failure, Undo undo) {
		this.phase = end;
		this.waiting = null;
		this.inFlight = false;
		this.ending = new Done(end, grant, failure);
		return step(undo, this.ending);
	}

	/**
	 * How it ended (the {@link Done} it answered with), for a driver that failed before
	 * it acted on that answer; {@code null} while it runs.
	 */
	@Nullable Done ending() {
		return this.ending;
	}

	/** End the asking gate once nothing is on its way, undo, then act. */
	private List<Effect> step(Undo undo, Effect action) {
		List<Effect> effects = new ArrayList<>(3);
		if (this.asking && !this.inFlight) {
			this.asking = false;
			effects.add(new EndGate(this.terms.id().first()));
		}
		if (undo != null) {
			effects.add(undo);
		}
		effects.add(action);
		return effects;
	}

	private long cap(long from) {
		return (this.terms.maxHoldNanos() != Long.MAX_VALUE) ? from + this.terms.maxHoldNanos() : Long.MAX_VALUE;
	}

}
