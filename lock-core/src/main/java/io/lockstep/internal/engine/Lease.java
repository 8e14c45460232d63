package io.lockstep.internal.engine;

import java.time.Instant;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongUnaryOperator;

import io.micrometer.observation.Observation;

/**
 * The lease state machine of one acquisition of a lock by one owner token. Every state
 * change happens here, by compare-and-set, and is reported once to the engine's
 * {@link Transitions}:
 *
 * <pre>
 * HELD ──(renewal confirmed: new deadline)──► HELD
 * HELD ──release starts──► RELEASING ──keys deleted──► RELEASED
 *                                    ├─before the minimum hold passed: keys set to
 *                                    │ expire when it passes──► EXPIRING (left to expire)
 *                                    ├─key gone / other owner──► LOST
 *                                    └─storage unreachable──► EXPIRING (left to expire)
 * HELD ──renewal found the key gone, or the local deadline passed──► LOST
 * HELD ──every handle dropped without close()──► LEAKED (renewal stops, the key expires)
 * HELD ──engine closed──► ABANDONED (the key expires)
 * </pre>
 *
 * The local deadline is conservative: the send time of the last confirmed acquire or
 * renewal plus the lease it granted, minus the storage's drift allowance
 * ({@link LockStore#driftNanos}); the storage's key never expires before it. For Redlock
 * this deadline is exactly the end of Redlock's validity time. Renewal fields are written
 * only by the watchdog thread.
 */
final class Lease {

	enum State {

		HELD, RELEASING, RELEASED, LOST, EXPIRING, LEAKED, ABANDONED;

		boolean isEnded() {
			return this != HELD && this != RELEASING;
		}

	}

	/** Told each time a lease leaves {@code HELD} or {@code RELEASING}. */
	interface Transitions {

		void ended(Lease lease, State from, State to, String reason);

	}

	private final LockId id;

	private final long[] fencingTokens;

	private final String owner;

	private final String lockName;

	private final long leaseNanos;

	private final boolean renewed;

	/**
	 * How long after acquisition the keys stay taken when released earlier, or 0; moved
	 * only by {@link #holdAtLeastUntil}.
	 */
	private volatile long minHoldNanos;

	private final long acquiredNanos;

	private final long capNanos;

	private final Instant acquiredAt;

	private final String holderThread;

	private final Transitions transitions;

	private final Observation observation;

	/** The local deadline and the renewal schedule. */
	private final RenewalSchedule renewal;

	private final AtomicReference<Status> status = new AtomicReference<>(Status.of(State.HELD, null));

	private final AtomicInteger depth = new AtomicInteger();

	/** Nearly always one call, entered and left once: a copy-on-write set. */
	private final Set<CallFrame> calls = new CopyOnWriteArraySet<>();

	/**
	 * @param request the request it was granted for (its keys, name and hold)
	 * @param grant the grant: the owner token, the fencing tokens, when the lease counts
	 * from (the send time of the acquire that granted it), the lease granted (already
	 * capped by max-hold) and the max-hold cap as an absolute {@code nanoTime}, or
	 * {@code Long.MAX_VALUE}
	 * @param drift the storage's clock-drift allowance of a granted lease (see
	 * {@link LockStore#driftNanos})
	 */
	Lease(LockRequest request, Acquisition.Grant grant, Observation observation, Transitions transitions,
			LongUnaryOperator drift) {
		HoldTerms hold = request.hold();
		this.id = request.id();
		this.fencingTokens = grant.fencingTokens();
		this.owner = grant.owner();
		this.lockName = request.lockName();
		this.leaseNanos = hold.leaseNanos();
		this.renewed = hold.renewed();
		this.minHoldNanos = hold.minHoldNanos();
		this.acquiredNanos = grant.sentNanos();
		this.capNanos = grant.capNanos();
		this.acquiredAt = Instant.now();
		this.holderThread = Thread.currentThread().getName();
		this.observation = observation;
		this.transitions = transitions;
		this.renewal = new RenewalSchedule(this.leaseNanos, grant.sentNanos(), grant.grantedNanos(), grant.capNanos(),
				drift);
	}

	LockId id() {
		return this.id;
	}

	/** The fencing token of one of the lease's keys. */
	long fencingToken(String key) {
		int index = this.id.keys().indexOf(key);
		return this.fencingTokens[Math.max(index, 0)];
	}

	String owner() {
		return this.owner;
	}

	String lockName() {
		return this.lockName;
	}

	long leaseNanos() {
		return this.leaseNanos;
	}

	boolean renewed() {
		return this.renewed;
	}

	long acquiredNanos() {
		return this.acquiredNanos;
	}

	/**
	 * What remains at {@code nowNanos} of the minimum hold, counted from when the acquire
	 * was sent, in whole milliseconds: 0 when there is none or it has passed.
	 */
	long minHoldLeftMillis(long nowNanos) {
		if (this.minHoldNanos <= 0) {
			return 0;
		}
		return Math.max(0, TimeUnit.NANOSECONDS.toMillis(this.acquiredNanos + this.minHoldNanos - nowNanos));
	}

	/**
	 * Moves the end of the minimum hold to {@code endNanos} (a {@code nanoTime}), earlier
	 * or later than it was, never past the max-hold cap: a release before then leaves the
	 * keys to expire at that moment.
	 */
	void holdAtLeastUntil(long endNanos) {
		long end = (endNanos - this.capNanos > 0) ? this.capNanos : endNanos;
		this.minHoldNanos = Math.max(0, end - this.acquiredNanos);
	}

	long capNanos() {
		return this.capNanos;
	}

	Instant acquiredAt() {
		return this.acquiredAt;
	}

	String holderThread() {
		return this.holderThread;
	}

	Observation observation() {
		return this.observation;
	}

	State state() {
		return this.status.get().state();
	}

	/** Why the lease ended, or {@code null} while held. */
	String reason() {
		return this.status.get().reason();
	}

	long deadlineNanos() {
		return this.renewal.deadlineNanos();
	}

	int depth() {
		return this.depth.get();
	}

	/** Held, and within the lease by this client's conservative clock. */
	boolean isHeld() {
		State current = state();
		return (current == State.HELD || current == State.RELEASING)
				&& System.nanoTime() - this.renewal.deadlineNanos() < 0;
	}

	// --- reentrancy: the handles that share this lease --------------------------------

	void enter(CallFrame call) {
		this.depth.incrementAndGet();
		if (call != null) {
			this.calls.add(call);
		}
	}

	/** Leaves one level; true when it was the last one. */
	boolean exit(CallFrame call) {
		if (call != null) {
			this.calls.remove(call);
		}
		return this.depth.decrementAndGet() == 0;
	}

	Set<CallFrame> calls() {
		return this.calls;
	}

	/**
	 * The local deadline and the renewal schedule (written by the watchdog thread only).
	 */
	RenewalSchedule renewal() {
		return this.renewal;
	}

	// --- transitions
	// ---------------------------------------------------------------------

	/**
	 * HELD → RELEASING.
	 * @return the state before: {@code HELD} when the release may proceed
	 */
	State beginRelease() {
		Status current = this.status.get();
		if (current.state() == State.HELD && this.status.compareAndSet(current, Status.of(State.RELEASING, null))) {
			return State.HELD;
		}
		return state();
	}

	/** RELEASING → RELEASED, LOST or EXPIRING. */
	void endRelease(State to, String reason) {
		move(State.RELEASING, to, reason);
	}

	/** HELD → LOST; false when the lease was not held (released, already lost). */
	boolean lose(String reason) {
		return move(State.HELD, State.LOST, reason);
	}

	/** HELD → LEAKED. */
	boolean leak(String reason) {
		return move(State.HELD, State.LEAKED, reason);
	}

	/** HELD or RELEASING → ABANDONED. */
	void abandon(String reason) {
		if (!move(State.HELD, State.ABANDONED, reason)) {
			move(State.RELEASING, State.ABANDONED, reason);
		}
	}

	private boolean move(State from, State to, String why) {
		Status current = this.status.get();
		if (current.state() != from || !this.status.compareAndSet(current, Status.of(to, why))) {
			return false;
		}
		this.transitions.ended(this, from, to, why);
		return true;
	}

	/**
	 * A state and, once ended, why. Without a reason, one instance per state: a lease
	 * never returns to a state it left, so a compare-and-set on them sees no ABA.
	 */
	private record Status(State state, String reason) {

		private static final Status[] PLAIN = Arrays.stream(State.values())
			.map((state) -> new Status(state, null))
			.toArray(Status[]::new);

		static Status of(State state, String reason) {
			return (reason != null) ? new Status(state, reason) : PLAIN[state.ordinal()];
		}

	}

	@Override
	public String toString() {
		return "Lease[" + this.id.display() + ", fencingToken=" + this.fencingTokens[0] + ", " + state() + "]";
	}

}
