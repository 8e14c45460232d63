package io.lockstep.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.lockstep.LockException;
import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of an {@link Acquisition}, whichever driver runs it: it feeds the machine and
 * does the effects every driver does alike (ends the key's asking gate, sends the undo,
 * re-arms the local waiter), sends the attempts and joins the local queues the driver
 * asks for, hands the local queue's news ({@link LocalQueues.Listener}) to the driver's
 * inbox, and ends the acquisition: the lease and the handle of a grant (the one place
 * that makes them), and the observation. {@link BlockingAcquirer} and
 * {@link AsyncAcquirer} each own one; only the driver's one thread at a time touches it,
 * except the inbox and a cancel. Over 300 lines for a reason: it is the drivers' whole
 * shared half, which they compose instead of extending a base class.
 */
final class AcquisitionRun implements LocalQueues.Listener {

	private static final Logger logger = LoggerFactory.getLogger(AcquisitionRun.class);

	private static final Acquisition.Released RELEASED = new Acquisition.Released();

	private static final Acquisition.Promoted PROMOTED = new Acquisition.Promoted();

	private static final Acquisition.PromotedBehind PROMOTED_BEHIND = new Acquisition.PromotedBehind();

	private final AcquireContext context;

	private final LockRequest request;

	/** The request for the keys it acquires: those the call does not hold already. */
	private final LockRequest acquiring;

	private final LockId id;

	/** The leases of the request's other keys, held by the call already. */
	private final List<Lease> held;

	/** Where the local queue's news go: the driver's inbox. */
	private final Consumer<Acquisition.Event> inbox;

	/** What every attempt asks the keys to be held on. */
	private final LockStore.LeaseTerms terms;

	private final Acquisition machine;

	private @Nullable Observation observation;

	/** Whether {@link #conclude} ran: the run ends once, whatever failed. */
	private boolean concluded;

	/**
	 * Its entry in the blocking key's local queue, or {@code null}; set by the driver's
	 * thread, read by a cancel.
	 */
	private volatile LocalQueues.Waiter waiter;

	/**
	 * @param held the leases of the request's keys the call holds already (they join the
	 * handle; the other keys are acquired)
	 * @param inbox where the local queue's news go (the driver's inbox; called under the
	 * waiters' monitor, possibly on the storage client's I/O thread)
	 */
	AcquisitionRun(AcquireContext context, LockRequest request, List<Lease> held, Consumer<Acquisition.Event> inbox) {
		this.context = context;
		this.request = request;
		this.held = List.copyOf(held);
		// nothing held already (the usual call): the request is what it acquires
		this.acquiring = held.isEmpty() ? request : request.withKeys(missing(request.id(), held));
		this.id = this.acquiring.id();
		this.inbox = inbox;
		this.terms = leaseTerms(context, request.hold());
		LockStore store = context.store();
		this.machine = new Acquisition(
				new Acquisition.Terms(this.id, request.waitNanos(), this.terms.leaseMillis(), context.maxHoldNanos(),
						this.id.size() == 1 && store.handsOff()),
				new Acquisition.Inputs(context.wakeUps()::notifies, store::driftNanos, OwnerTokens::next,
						AcquisitionRun::jitter),
				context.waits());
	}

	/**
	 * The lease (capped by max-hold), the cap, the hand-off lease (a renewed lease is
	 * handed off short, see {@link WaitPolicy#handOffGrant}; a fixed one whole) and the
	 * lock delay.
	 */
	private static LockStore.LeaseTerms leaseTerms(AcquireContext context, HoldTerms hold) {
		long maxHoldNanos = context.maxHoldNanos();
		long grantedMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(hold.leaseNanos(), maxHoldNanos)));
		long maxHoldMillis = (maxHoldNanos != Long.MAX_VALUE) ? TimeUnit.NANOSECONDS.toMillis(maxHoldNanos) : 0;
		long handOffMillis = hold.renewed() ? Math.min(grantedMillis, context.waits().handOffGrant().toMillis())
				: grantedMillis;
		return new LockStore.LeaseTerms(grantedMillis, maxHoldMillis, handOffMillis, hold.delayMillis());
	}

	private static List<String> missing(LockId id, List<Lease> held) {
		List<String> missing = new ArrayList<>(id.keys());
		held.forEach((lease) -> missing.removeAll(lease.id().keys()));
		return missing;
	}

	LockId id() {
		return this.id;
	}

	/**
	 * Starts the observation and the machine (it asks the key's asking gate itself).
	 * @return the first action
	 */
	Optional<Acquisition.Effect> start() {
		this.observation = this.context.observations().startAcquire(this.id.display(), this.request.lockName());
		Acquisition.Gate gate = new Acquisition.Gate(this.context.waiters()::beginAsking,
				this.context.wakeUps()::hearsHandOffs);
		return apply(this.machine.start(System.nanoTime(), gate));
	}

	/**
	 * Feeds one event to the machine and does the side effects of its answer.
	 * @return the action it answered with, if any (else the driver goes on as before)
	 */
	Optional<Acquisition.Effect> feed(Acquisition.Event event) {
		return apply(this.machine.on(event, System.nanoTime()));
	}

	boolean ended() {
		return this.machine.phase().isEnded();
	}

	/**
	 * Ends the run after a failure of the driver's own (an exception or Error while it
	 * acted, the machine's answer perhaps lost with it), whatever the machine's phase: an
	 * abort while the machine runs, then the conclusion of how the machine ended, once. A
	 * grant the caller will not get (it is told the failure) is released at once. Never
	 * throws: what fails here is added to {@code failure} as suppressed.
	 * @param onThisThread whether the call's thread is the current one
	 * @param cancelled whether the caller cancelled it (see {@link #conclude})
	 * @return the conclusion's handle when the machine had ended with a grant before the
	 * failure and the caller may still get it (the asynchronous driver), else
	 * {@code null}
	 */
	@Nullable LeaseHandle endAfter(Throwable failure, boolean onThisThread, BooleanSupplier cancelled) {
		if (this.concluded) {
			return null;
		}
		try {
			if (!ended()) {
				feed(new Acquisition.Aborted(asLockException(failure)));
			}
			Acquisition.Done ending = this.machine.ending();
			if (ending == null) {
				throw new IllegalStateException("an abort left the acquisition running");
			}
			LeaseHandle handle = conclude(ending, onThisThread, cancelled);
			if (handle != null && onThisThread) {
				// the caller gets the failure, not the lock
				handle.close();
				return null;
			}
			return handle;
		}
		catch (RuntimeException | Error ex) {
			if (ex != failure) {
				failure.addSuppressed(ex);
			}
			return null;
		}
	}

	/**
	 * Does the effects that every driver does alike, at once and in order.
	 * @return the action among them (an answer has one at most)
	 */
	private Optional<Acquisition.Effect> apply(List<Acquisition.Effect> effects) {
		Acquisition.Effect action = null;
		for (Acquisition.Effect effect : effects) {
			if (effect.isAction()) {
				action = effect;
			}
			if (effect instanceof Acquisition.EndGate gate) {
				this.context.waiters().endAsking(gate.key());
			}
			else if (effect instanceof Acquisition.Undo undo) {
				// sent without waiting, after the command it undoes, and again until it
				// lands or what it gives back has expired (a lease and its lock delay)
				this.context.releases()
					.land(undo.leave() ? LockStore.Release.leave(this.id, undo.owner())
							: LockStore.Release.undo(this.id, undo.owner()),
							undo.untilNanos() + TimeUnit.MILLISECONDS.toNanos(this.request.hold().delayMillis()));
			}
			else if (effect instanceof Acquisition.Send send && send.rearm() && this.waiter != null) {
				this.waiter.rearm();
			}
		}
		return Optional.ofNullable(action);
	}

	/** Sends the attempt and waits for its reply (bounded by the command timeout). */
	Acquisition.Event attempt(Acquisition.Send send) {
		try {
			return replied(this.context.store().acquire(attemptOf(send)));
		}
		catch (LockException ex) {
			return new Acquisition.AttemptFailed(ex);
		}
	}

	/**
	 * Sends the attempt; its reply (or failure) goes to {@code events} as an event.
	 * @return the attempt on its way: cancelling it drops what the store has not sent
	 * (see {@link LockStore#acquireAsync})
	 */
	CompletableFuture<?> attemptAsync(Acquisition.Send send, Executor blocking, Consumer<Acquisition.Event> events) {
		CompletableFuture<LockStore.Attempt> reply;
		try {
			reply = this.context.store().acquireAsync(attemptOf(send), blocking);
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		reply
			.handle((attempt, failure) -> (failure == null) ? replied(attempt)
					: new Acquisition.AttemptFailed(asLockException(failure)))
			.thenAccept(events);
		return reply;
	}

	private LockStore.Acquire attemptOf(Acquisition.Send send) {
		return new LockStore.Acquire(this.id, send.owner(), this.terms, send.entryMillis(), send.queued());
	}

	private static Acquisition.Event replied(LockStore.Attempt attempt) {
		return attempt.acquired() ? new Acquisition.Granted(attempt.fencingTokens(), attempt.grantedMillis())
				: new Acquisition.Held(attempt.holderTtlMillis(), attempt.blockingIndex(), attempt.fencingCounter());
	}

	/** Joins the key's local queue, leaving the one it is in (blocks for the channel). */
	Acquisition.Registered register(Acquisition.Register register) {
		unregister(false);
		LocalQueues.Waiter registered = this.context.waiters()
			.register(register.key(), register.owner(), register.handOff(), this);
		this.waiter = registered;
		return new Acquisition.Registered(this.context.waiters().isHead(registered));
	}

	/**
	 * Joins the key's local queue, leaving the one it is in; readying the channel may
	 * block. The answer reaches the inbox once the channel is ready, refused, or not
	 * ready within the command timeout.
	 */
	void registerAsync(Acquisition.Register register) {
		unregister(false);
		LocalQueues.Registration registration = this.context.waiters()
			.registerAsync(register.key(), register.owner(), register.handOff(), this);
		LocalQueues.Waiter registered = registration.waiter();
		this.waiter = registered;
		CompletableFuture<?> listening = registration.listening();
		// a copy: the subscription's own future is shared with other waiters
		listening.copy()
			.orTimeout(this.context.store().commandTimeout().toNanos(), TimeUnit.NANOSECONDS)
			.whenComplete((subscribed, failure) -> {
				if (failure != null && listening.isDone()) {
					// records a refusal (then waiters poll); the future is done: no wait
					this.context.wakeUps().await(listening);
				}
				this.inbox.accept(new Acquisition.Registered(this.context.waiters().isHead(registered)));
			});
	}

	/** Stops waiting in the local queue now (a cancel); the drainer aborts it later. */
	void leaveQueueNow() {
		LocalQueues.Waiter current = this.waiter;
		if (current != null && this.context.waiters().unregister(current, false)) {
			giveBackHandedHere(current.owner());
		}
	}

	private void unregister(boolean acquired) {
		if (this.waiter != null) {
			if (this.context.waiters().unregister(this.waiter, acquired)) {
				giveBackHandedHere(this.waiter.owner());
			}
			this.waiter = null;
		}
	}

	/**
	 * Gives back a lock a release of this client handed to the owner token, which leaves
	 * without taking it: sent after that release's reply, so it finds what it handed.
	 */
	private void giveBackHandedHere(String owner) {
		long untilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(this.terms.handOffMillis());
		this.context.releases().land(LockStore.Release.leave(this.id, owner), untilNanos);
	}

	/**
	 * Ends the acquisition: leaves the local queue; for a grant, creates the lease and
	 * the handle (of the leases held already and the new one); stops the observation.
	 * @param onThisThread whether the guarded call runs on the current thread (see
	 * {@link LeaseHandle})
	 * @param cancelled whether the caller cancelled it (an abort is then not an error,
	 * and a grant is given back); asked once the waiter left its local queue
	 * @return the handle when acquired and not cancelled, else {@code null}
	 */
	LeaseHandle conclude(Acquisition.Done done, boolean onThisThread, BooleanSupplier cancelled) {
		this.concluded = true;
		boolean acquired = done.phase() == Acquisition.Phase.ACQUIRED;
		unregister(acquired);
		// cancelled is asked after leaving the queue: a cancel that gave back a lock
		// handed here (leaveQueueNow) completed the caller's future before it left it
		if (acquired && cancelled.getAsBoolean()) {
			// no caller will get it: given back without a lease, so nothing is
			// reported lost when the cancel gave it back already
			giveBack(done.grant());
			stopAcquire(LockObservationContext.CANCELLED, -1,
					new LockException("Acquiring lock '" + this.id.display() + "' was cancelled"));
			return null;
		}
		Lease lease = null;
		String outcome;
		long fencingToken = -1;
		if (acquired) {
			Acquisition.Grant grant = done.grant();
			try {
				lease = this.context.leases().granted(this.acquiring, grant);
			}
			catch (RuntimeException | Error ex) {
				// no lease and no handle (an observation handler failed): the grant is
				// given back and the caller told
				giveBack(grant);
				stopAcquire(LockObservationContext.ERROR, -1, asLockException(ex));
				throw ex;
			}
			outcome = LockObservationContext.ACQUIRED;
			fencingToken = grant.fencingTokens()[0];
		}
		else if (done.phase() == Acquisition.Phase.TIMED_OUT) {
			outcome = this.request.skips() ? LockObservationContext.SKIPPED : LockObservationContext.TIMEOUT;
		}
		else {
			outcome = cancelled.getAsBoolean() ? LockObservationContext.CANCELLED : LockObservationContext.ERROR;
		}
		// an observation handler's failure must not strand the lease without a handle
		stopAcquire(outcome, fencingToken, done.failure());
		if (lease == null) {
			return null;
		}
		List<Lease> parts = new ArrayList<>(this.held);
		parts.add(lease);
		return new LeaseHandle(this.context.releases(), this.request.id(), parts, onThisThread);
	}

	/** Stops the acquire observation; a handler's failure (even an Error) is logged. */
	private void stopAcquire(String outcome, long fencingToken, @Nullable LockException failure) {
		if (this.observation == null) {
			return;
		}
		try {
			this.context.observations().stopAcquire(this.observation, outcome, fencingToken, failure);
		}
		catch (RuntimeException | Error ex) {
			logger.warn("An observation handler failed when the acquisition of '{}' ended", this.id.display(), ex);
		}
	}

	/** Releases a grant no lease was made of, until what it took has expired. */
	private void giveBack(Acquisition.Grant grant) {
		long untilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(this.terms.leaseMillis())
				+ TimeUnit.MILLISECONDS.toNanos(this.terms.delayMillis());
		this.context.releases().land(LockStore.Release.undo(this.id, grant.owner()), untilNanos);
		this.id.keys().forEach(this.context.waiters()::holderLeft);
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
	public void released() {
		this.inbox.accept(RELEASED);
	}

	@Override
	public void promoted() {
		this.inbox.accept(PROMOTED);
	}

	@Override
	public void handedOff(String owner, long fencingToken, long leaseMillis) {
		this.inbox.accept(new Acquisition.HandedOff(owner, fencingToken, leaseMillis));
	}

	@Override
	public void promotedBehind() {
		this.inbox.accept(PROMOTED_BEHIND);
	}

	/**
	 * Its hand-off lease, when a release may hand it the lock as a successor: a one-key
	 * exclusive lock without max hold or lock delay (the value a successor is handed has
	 * neither).
	 */
	@Override
	public long successorLease() {
		boolean plain = this.terms.maxHoldMillis() == 0 && this.terms.delayMillis() == 0;
		return (plain && namesSuccessor()) ? this.terms.handOffMillis() : 0;
	}

	@Override
	public boolean namesSuccessor() {
		return this.id.size() == 1 && this.id.sharing().exclusive();
	}

	@Override
	public void handedOffHere(String owner, long fencingToken, long leaseMillis, long sentNanos) {
		this.inbox.accept(new Acquisition.HandedOffHere(owner, fencingToken, leaseMillis, sentNanos));
	}

	@Override
	public boolean shared() {
		return !this.id.sharing().exclusive();
	}

	@Override
	public void closed() {
		this.inbox.accept(new Acquisition.Aborted(new LockException("The lock client is closed")));
	}

	private static long jitter(long max) {
		return ThreadLocalRandom.current().nextLong(max / 2, max + 1);
	}

}
