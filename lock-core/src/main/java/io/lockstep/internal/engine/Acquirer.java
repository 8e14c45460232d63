package io.lockstep.internal.engine;

import java.util.Queue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

import io.lockstep.LockException;
import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two drivers of an {@link Acquisition} share: the lock's terms, the events that
 * reach it from its local queue ({@link Waiters.Wake}: put in the inbox, then the driver
 * is woken), the side effects of a step (the asking gate, the undo) and the ending (the
 * lease of a grant, the observation). Only the driver's one thread at a time touches the
 * machine and the fields here, except the inbox.
 */
abstract class Acquirer implements Waiters.Wake {

	private static final Logger logger = LoggerFactory.getLogger(Acquirer.class);

	private static final Acquisition.Released RELEASED = new Acquisition.Released();

	private static final Acquisition.Promoted PROMOTED = new Acquisition.Promoted();

	final LockEngine engine;

	final LockBackend backend;

	final Waiters waiters;

	final LockId id;

	private final String lockName;

	private final long waitNanos;

	private final long leaseNanos;

	private final boolean renewed;

	private final long minHoldNanos;

	final long grantedMillis;

	final long maxHoldMillis;

	final long handOffMillis;

	private final Acquisition machine;

	final Queue<Acquisition.Event> inbox = new ConcurrentLinkedQueue<>();

	private Observation observation;

	/**
	 * Its entry in the blocking key's local queue, or {@code null}; set by the driver's
	 * thread, read by a cancel.
	 */
	volatile Waiters.Waiter waiter;

	Acquirer(LockEngine engine, LockId id, String lockName, long waitNanos, long leaseNanos, boolean renewed,
			long minHoldNanos) {
		this.engine = engine;
		this.backend = engine.backend();
		this.waiters = engine.waiters();
		this.id = id;
		this.lockName = lockName;
		this.waitNanos = waitNanos;
		this.leaseNanos = leaseNanos;
		this.renewed = renewed;
		this.minHoldNanos = minHoldNanos;
		this.grantedMillis = engine.grantedMillis(leaseNanos);
		this.maxHoldMillis = engine.maxHoldMillis();
		this.handOffMillis = LockEngine.handOffMillis(this.grantedMillis, renewed);
		this.machine = new Acquisition(new Acquisition.Terms(id, waitNanos, this.grantedMillis, engine.maxHoldNanos(),
				id.size() == 1 && this.backend.handsOff(), this.backend::notifies, this.backend::driftNanos,
				LockEngine::newOwner, Acquirer::jitter));
	}

	/** Puts the event in the inbox and wakes the driver. */
	abstract void post(Acquisition.Event event);

	/** Starts the observation and the machine: the first action. */
	final Acquisition.Action begin() {
		this.observation = this.engine.observations().startAcquire(this.id.display(), this.lockName);
		boolean first = this.id.size() == 1 && this.waitNanos > 0 && this.waiters.beginAsking(this.id.first());
		boolean hears = first && this.backend.handsOff() && this.backend.hearsHandOffs(this.id.first());
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
		if (step.endAsking()) {
			this.waiters.endAsking(this.id.first());
		}
		Acquisition.Undo undo = step.undo();
		if (undo != null) {
			// sent without waiting; the command it undoes may still run before it
			try {
				if (undo.leave()) {
					this.backend.leave(this.id, undo.owner());
				}
				else {
					this.backend.releaseQuietly(this.id, undo.owner());
				}
			}
			catch (RuntimeException ex) {
				logger.debug("Undoing an attempt on '{}' failed; what it took expires on its own", this.id.display(),
						ex);
			}
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
			lease = this.engine.granted(this.id, grant.fencingTokens(), grant.owner(), this.lockName, this.leaseNanos,
					this.renewed, this.minHoldNanos, grant.sentNanos(), grant.grantedNanos(), grant.capNanos());
			outcome = LockObservationContext.ACQUIRED;
			fencingToken = grant.fencingTokens()[0];
		}
		else if (done.phase() == Acquisition.Phase.TIMED_OUT) {
			outcome = LockObservationContext.TIMEOUT;
		}
		else {
			outcome = cancelled ? LockObservationContext.CANCELLED : LockObservationContext.ERROR;
		}
		try {
			this.engine.observations().stopAcquire(this.observation, outcome, fencingToken, done.failure());
		}
		catch (RuntimeException ex) {
			// an observation handler's failure must not strand the lease without a handle
			logger.warn("An observation handler failed when the acquisition of '{}' ended", this.id.display(), ex);
		}
		return lease;
	}

	/** The event of an attempt's reply. */
	static Acquisition.Event replied(LockBackend.Attempt attempt) {
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
	public final void closed() {
		post(new Acquisition.Aborted(new LockException("The lock client is closed")));
	}

	private static long jitter(long max) {
		return ThreadLocalRandom.current().nextLong(max / 2, max + 1);
	}

}
