package io.lockstep.internal.engine;

import java.util.Queue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockException;
import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two drivers of an {@link Acquisition} share: the lock's terms, the events that
 * reach it from its local queue ({@link LocalQueues.Listener}: put in the inbox, then the
 * driver is woken), the side effects of a step (the asking gate, the undo) and the ending
 * (the lease of a grant, the observation). Only the driver's one thread at a time touches
 * the machine and the fields here, except the inbox.
 */
abstract class Acquirer implements LocalQueues.Listener {

	private static final Logger logger = LoggerFactory.getLogger(Acquirer.class);

	/**
	 * The longest lease a hand-off grants a waiter whose lease is renewed (a watchdog
	 * lease): its watchdog extends it once it has the lock, and a waiter that vanished
	 * after it queued holds the lock up no longer than this (a {@link Lease} renews such
	 * a short first grant early). A fixed lease is handed off whole.
	 */
	static final long HAND_OFF_GRANT_MILLIS = 5000;

	private static final Acquisition.Released RELEASED = new Acquisition.Released();

	private static final Acquisition.Promoted PROMOTED = new Acquisition.Promoted();

	final AcquireContext context;

	final LockStore store;

	final WakeUps wakeUps;

	final LocalQueues waiters;

	final LockId id;

	private final String lockName;

	private final long waitNanos;

	private final long leaseNanos;

	private final boolean renewed;

	private final long minHoldNanos;

	private final long delayMillis;

	/** Whether a caller that finds the lock held skips its work (outcome "skipped"). */
	private final boolean skips;

	final long grantedMillis;

	final long maxHoldMillis;

	final long handOffMillis;

	private final Acquisition machine;

	final Queue<Acquisition.Event> inbox = new ConcurrentLinkedQueue<>();

	private Observation observation;

	/** Whether it holds the key's asking gate (see {@link LocalQueues#beginAsking}). */
	private boolean gated;

	/**
	 * Its entry in the blocking key's local queue, or {@code null}; set by the driver's
	 * thread, read by a cancel.
	 */
	volatile LocalQueues.Waiter waiter;

	Acquirer(AcquireContext context, LockId id, String lockName, long waitNanos, HoldTerms hold, boolean skips) {
		long leaseNanos = hold.leaseNanos();
		boolean renewed = hold.renewed();
		this.context = context;
		this.store = context.store();
		this.wakeUps = context.wakeUps();
		this.waiters = context.waiters();
		this.id = id;
		this.lockName = lockName;
		this.waitNanos = waitNanos;
		this.leaseNanos = leaseNanos;
		this.renewed = renewed;
		this.minHoldNanos = hold.minHoldNanos();
		this.delayMillis = hold.delayMillis();
		this.skips = skips;
		this.grantedMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(leaseNanos, context.maxHoldNanos())));
		this.maxHoldMillis = (context.maxHoldNanos() != Long.MAX_VALUE)
				? TimeUnit.NANOSECONDS.toMillis(context.maxHoldNanos()) : 0;
		this.handOffMillis = renewed ? Math.min(this.grantedMillis, HAND_OFF_GRANT_MILLIS) : this.grantedMillis;
		this.machine = new Acquisition(new Acquisition.Terms(id, waitNanos, this.grantedMillis, context.maxHoldNanos(),
				handsOff(id, this.store), this.wakeUps::notifies, this.store::driftNanos, OwnerTokens::next,
				Acquirer::jitter));
	}

	/**
	 * Whether the store hands this lock to its queued waiter: a one-key lock on a store
	 * that hands off (a release hands a key to the readers first in line together, a
	 * semaphore's permit to the first permit holder in line).
	 */
	private static boolean handsOff(LockId id, LockStore store) {
		return id.size() == 1 && store.handsOff();
	}

	/** Puts the event in the inbox and wakes the driver. */
	abstract void post(Acquisition.Event event);

	/** Starts the observation and the machine: the first action. */
	final Acquisition.Action begin() {
		this.observation = this.context.observations().startAcquire(this.id.display(), this.lockName);
		// only a key's local head asks for an exclusive lock; every caller asks for a
		// share
		this.gated = this.id.size() == 1 && this.waitNanos > 0 && this.id.sharing().exclusive()
				&& this.waiters.beginAsking(this.id.first());
		boolean first = this.gated || (this.id.size() == 1 && this.waitNanos > 0 && !this.id.sharing().exclusive());
		boolean hears = first && handsOff(this.id, this.store) && this.wakeUps.hearsHandOffs(this.id.first());
		return apply(this.machine.start(System.nanoTime(), first, hears));
	}

	/** Feeds one event to the machine and does the step's side effects. */
	final Acquisition.Action feed(Acquisition.Event event) {
		return apply(this.machine.on(event, System.nanoTime()));
	}

	final boolean ended() {
		return this.machine.phase().isEnded();
	}

	private Acquisition.Action apply(Acquisition.Step step) {
		if (step.endAsking() && this.gated) {
			this.gated = false;
			this.waiters.endAsking(this.id.first());
		}
		Acquisition.Undo undo = step.undo();
		if (undo != null) {
			// sent without waiting, after the command it undoes, and again until it lands
			// or what it gives back has expired (a lease and its lock delay)
			this.context.releases()
				.land(undo.leave() ? LockStore.Release.leave(this.id, undo.owner())
						: LockStore.Release.undo(this.id, undo.owner()),
						undo.untilNanos() + TimeUnit.MILLISECONDS.toNanos(this.delayMillis));
		}
		if (step.action() instanceof Acquisition.Send && this.waiter != null) {
			this.waiter.rearm();
		}
		return step.action();
	}

	/** Leaves the local queue it is in, if any. */
	final void unregister(boolean acquired) {
		if (this.waiter != null) {
			this.waiters.unregister(this.waiter, acquired);
			this.waiter = null;
		}
	}

	/**
	 * Ends the acquisition: leaves the local queue, creates the lease of a grant, stops
	 * the observation.
	 * @param cancelled whether the caller cancelled it (an abort is then not an error)
	 * @return the lease when acquired, else {@code null}
	 */
	final Lease conclude(Acquisition.Done done, boolean cancelled) {
		boolean acquired = done.phase() == Acquisition.Phase.ACQUIRED;
		unregister(acquired);
		Lease lease = null;
		String outcome;
		long fencingToken = -1;
		if (acquired) {
			Acquisition.Grant grant = done.grant();
			lease = this.context.leases()
				.granted(this.id, grant.fencingTokens(), grant.owner(), this.lockName, this.leaseNanos, this.renewed,
						this.minHoldNanos, grant.sentNanos(), grant.grantedNanos(), grant.capNanos());
			outcome = LockObservationContext.ACQUIRED;
			fencingToken = grant.fencingTokens()[0];
		}
		else if (done.phase() == Acquisition.Phase.TIMED_OUT) {
			outcome = this.skips ? LockObservationContext.SKIPPED : LockObservationContext.TIMEOUT;
		}
		else {
			outcome = cancelled ? LockObservationContext.CANCELLED : LockObservationContext.ERROR;
		}
		try {
			this.context.observations().stopAcquire(this.observation, outcome, fencingToken, done.failure());
		}
		catch (RuntimeException ex) {
			// an observation handler's failure must not strand the lease without a handle
			logger.warn("An observation handler failed when the acquisition of '{}' ended", this.id.display(), ex);
		}
		return lease;
	}

	/** The store request of an attempt. */
	final LockStore.Acquire request(Acquisition.Send send) {
		return new LockStore.Acquire(this.id, send.owner(), this.grantedMillis, this.maxHoldMillis, send.entryMillis(),
				this.handOffMillis, send.queued(), this.delayMillis);
	}

	/** The event of an attempt's reply. */
	static Acquisition.Event replied(LockStore.Attempt attempt) {
		return attempt.acquired() ? new Acquisition.Granted(attempt.fencingTokens(), attempt.grantedMillis())
				: new Acquisition.Held(attempt.holderTtlMillis(), attempt.blockingIndex(), attempt.fencingCounter());
	}

	static LockException asLockException(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return (cause instanceof LockException lockException) ? lockException
				: new LockException("Acquiring the lock failed: " + cause.getMessage(), cause);
	}

	@Override
	public final void released() {
		post(RELEASED);
	}

	@Override
	public final void promoted() {
		post(PROMOTED);
	}

	@Override
	public final void handedOff(String owner, long fencingToken, long leaseMillis) {
		post(new Acquisition.HandedOff(owner, fencingToken, leaseMillis));
	}

	@Override
	public final boolean shared() {
		return !this.id.sharing().exclusive();
	}

	@Override
	public final void closed() {
		post(new Acquisition.Aborted(new LockException("The lock client is closed")));
	}

	private static long jitter(long max) {
		return ThreadLocalRandom.current().nextLong(max / 2, max + 1);
	}

}
