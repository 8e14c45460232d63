package io.lockstep.redis;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.lockstep.internal.CallContext;

/**
 * One acquisition of one or more keys by one owner token: its fencing tokens, its local
 * conservative deadline, its reentrancy depth and whether it is still held. Shared by the
 * handles of the outer and of reentrant acquisitions.
 */
final class Lease implements CallContext.Entry {

	enum State {

		HELD, RELEASED, LOST, ABANDONED

	}

	private final Object owner;

	private final List<String> keys;

	private final long[] fencingTokens;

	private final String ownerToken;

	private final String lockName;

	private final long leaseNanos;

	private final boolean renewed;

	private final long acquiredNanos;

	private final Instant acquiredAt;

	private final Thread holder;

	private final Consumer<Lease> verifier;

	private volatile boolean detached;

	private final AtomicInteger depth = new AtomicInteger(1);

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long deadlineNanos;

	private volatile long lastRenewSentNanos;

	private volatile String lostReason;

	private volatile String renewalError;

	private volatile Object observation;

	Lease(Object owner, List<String> keys, long[] fencingTokens, String ownerToken, String lockName, long leaseNanos,
			boolean renewed, long sentNanos, Consumer<Lease> verifier) {
		this.owner = owner;
		this.keys = List.copyOf(keys);
		this.fencingTokens = fencingTokens;
		this.ownerToken = ownerToken;
		this.lockName = lockName;
		this.leaseNanos = leaseNanos;
		this.renewed = renewed;
		this.acquiredNanos = sentNanos;
		this.acquiredAt = Instant.now();
		this.holder = Thread.currentThread();
		this.verifier = verifier;
		this.lastRenewSentNanos = sentNanos;
		this.deadlineNanos = sentNanos + leaseNanos - driftNanos(leaseNanos);
	}

	/** Clock drift allowance: 1% of the lease plus 2 ms, as in the Redlock reference. */
	static long driftNanos(long leaseNanos) {
		return leaseNanos / 100 + 2_000_000L;
	}

	@Override
	public String key() {
		return (this.keys.size() == 1) ? this.keys.get(0) : String.join(",", this.keys);
	}

	@Override
	public Object owner() {
		return this.owner;
	}

	List<String> keys() {
		return this.keys;
	}

	@Override
	public long fencingToken() {
		return this.fencingTokens[0];
	}

	long[] fencingTokens() {
		return this.fencingTokens.clone();
	}

	@Override
	public boolean isActive() {
		return this.state.get() == State.HELD;
	}

	/** Held, and within the lease by this client's conservative clock. */
	boolean isHeld() {
		return isActive() && System.nanoTime() - this.deadlineNanos < 0;
	}

	String ownerToken() {
		return this.ownerToken;
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

	Instant acquiredAt() {
		return this.acquiredAt;
	}

	Thread holder() {
		return this.holder;
	}

	@Override
	public int depth() {
		return this.depth.get();
	}

	@Override
	public void verifyHeld() {
		if (this.state.get() != State.RELEASED) {
			this.verifier.accept(this);
		}
	}

	@Override
	public void detach() {
		this.detached = true;
	}

	/** Whether the lease was unbound from its acquiring thread (asynchronous work). */
	boolean detached() {
		return this.detached;
	}

	long deadlineNanos() {
		return this.deadlineNanos;
	}

	long lastRenewSentNanos() {
		return this.lastRenewSentNanos;
	}

	State state() {
		return this.state.get();
	}

	String lostReason() {
		return this.lostReason;
	}

	Object observation() {
		return this.observation;
	}

	void observation(Object observation) {
		this.observation = observation;
	}

	String renewalError() {
		return this.renewalError;
	}

	/**
	 * A renewal failed to reach Redis: remember why, and make the lease due again at
	 * once.
	 */
	void renewalFailed(String error) {
		this.renewalError = error;
		this.lastRenewSentNanos -= this.leaseNanos / 3;
	}

	void enter() {
		this.depth.incrementAndGet();
	}

	/** Leaves one level; true when this was the outermost one. */
	boolean leave() {
		return this.depth.decrementAndGet() == 0;
	}

	void renewSent(long sentNanos) {
		this.lastRenewSentNanos = sentNanos;
	}

	/** A renewal sent at {@code sentNanos} for {@code grantedNanos} was confirmed. */
	void renewConfirmed(long sentNanos, long grantedNanos) {
		long deadline = sentNanos + grantedNanos - driftNanos(grantedNanos);
		if (deadline - this.deadlineNanos > 0) {
			this.deadlineNanos = deadline;
		}
		this.renewalError = null;
	}

	boolean markLost(String reason) {
		if (this.state.compareAndSet(State.HELD, State.LOST)) {
			this.lostReason = reason;
			return true;
		}
		return false;
	}

	boolean markReleased() {
		return this.state.compareAndSet(State.HELD, State.RELEASED);
	}

	boolean markAbandoned() {
		return this.state.compareAndSet(State.HELD, State.ABANDONED);
	}

	@Override
	public String toString() {
		return "Lease[" + key() + ", fencingToken=" + fencingToken() + ", " + this.state.get() + "]";
	}

}
