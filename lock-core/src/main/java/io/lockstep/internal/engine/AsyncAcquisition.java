package io.lockstep.internal.engine;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockException;
import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;

/**
 * One acquisition that waits without a thread ({@link LockEngine#acquireAsync}): the same
 * atomic attempt as the blocking loop, sent by the backend's asynchronous API; while
 * another owner holds the lock it is a {@link Waiters} entry of the blocking key, retried
 * when a release notification signals it, and otherwise by a timer bounded by the
 * holder's remaining lease and the periodic re-check (or jittered back-off where
 * notifications are refused), exactly as a parked thread would wake. A failed attempt is
 * "not yet" while the wait lasts (jittered back-off, doubling from 20 ms to 500 ms).
 *
 * <p>
 * Threads: replies are handled on the engine's worker threads, never on the storage
 * client's I/O threads, and the future completes there; timers run on the engine's timer
 * thread. At most one attempt is on its way at a time. Cancelling the future stops the
 * waiting; a grant that races with the cancellation is released.
 */
final class AsyncAcquisition implements Waiters.Wakeable {

	private static final long MIN_RETRY_MILLIS = 20;

	private static final long MAX_RETRY_MILLIS = 500;

	private final LockEngine engine;

	private final LockBackend backend;

	private final Waiters waiters;

	private final AsyncThreads threads;

	private final LockId id;

	private final String lockName;

	private final long waitNanos;

	private final long leaseNanos;

	private final boolean renewed;

	private final long minHoldNanos;

	private final String owner;

	private final long grantedMillis;

	private final long maxHoldMillis;

	private final CompletableFuture<LeaseHandle> result = new CompletableFuture<>();

	private final long start = System.nanoTime();

	private Observation observation;

	// guarded by this

	private boolean attempting;

	private boolean again;

	private boolean finished;

	private Waiters.Waiter waiter;

	private ScheduledFuture<?> timer;

	private long retryMillis = MIN_RETRY_MILLIS;

	private int failures;

	AsyncAcquisition(LockEngine engine, LockId id, String lockName, long waitNanos, long leaseNanos, boolean renewed,
			long minHoldNanos) {
		this.engine = engine;
		this.backend = engine.backend();
		this.waiters = engine.waiters();
		this.threads = engine.asyncThreads();
		this.id = id;
		this.lockName = lockName;
		this.waitNanos = waitNanos;
		this.leaseNanos = leaseNanos;
		this.renewed = renewed;
		this.minHoldNanos = minHoldNanos;
		this.owner = LockEngine.newOwner();
		this.grantedMillis = engine.grantedMillis(leaseNanos);
		this.maxHoldMillis = engine.maxHoldMillis();
	}

	CompletableFuture<LeaseHandle> start() {
		this.observation = this.engine.observations().startAcquire(this.id.display(), this.lockName);
		this.result.whenComplete((handle, failure) -> {
			if (failure instanceof CancellationException) {
				finish(LockObservationContext.CANCELLED, -1, null, false);
			}
		});
		attempt();
		return this.result;
	}

	/** Sends one attempt, or asks for another after the one on its way. Never blocks. */
	private void attempt() {
		Waiters.Waiter current;
		synchronized (this) {
			if (this.finished) {
				return;
			}
			if (this.attempting) {
				this.again = true;
				return;
			}
			this.attempting = true;
			this.again = false;
			cancelTimer();
			current = this.waiter;
		}
		if (current != null) {
			current.rearm();
		}
		long sent = System.nanoTime();
		CompletableFuture<LockBackend.Attempt> reply;
		try {
			reply = this.backend.tryAcquireAsync(this.id, this.owner, this.grantedMillis, this.maxHoldMillis,
					this.threads.workers());
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		try {
			reply.whenCompleteAsync((attempt, failure) -> {
				try {
					replied(attempt, failure, sent);
				}
				catch (LockException ex) {
					// the engine was closed
					fail(ex);
				}
			}, this.threads.workers());
		}
		catch (LockException ex) {
			fail(ex);
		}
	}

	/** On a worker thread. */
	private void replied(LockBackend.Attempt attempt, Throwable failure, long sent) {
		if (this.result.isDone()) {
			// cancelled meanwhile: a grant, or a failed attempt that may still run, is
			// undone
			if (failure != null || attempt.acquired()) {
				this.backend.releaseQuietly(this.id, this.owner);
			}
			return;
		}
		if (failure != null) {
			failed(unwrap(failure));
			return;
		}
		if (attempt.acquired()) {
			granted(attempt, sent);
			return;
		}
		long waited = System.nanoTime() - this.start;
		if (waited >= this.waitNanos) {
			if (finish(LockObservationContext.TIMEOUT, -1, null, false)) {
				this.result.complete(null);
			}
			return;
		}
		String blocking = this.id.keys().get(Math.max(0, attempt.blockingIndex()));
		Waiters.Waiter current;
		boolean retryNow;
		synchronized (this) {
			this.attempting = false;
			this.retryMillis = MIN_RETRY_MILLIS;
			if (this.finished) {
				return;
			}
			current = this.waiter;
			boolean sameKey = current != null && current.key().equals(blocking);
			if (sameKey && !this.again) {
				this.timer = this.threads.schedule(this::attempt,
						current.waitNanos(this.waitNanos - waited, attempt.holderTtlMillis()));
				return;
			}
			// a release signalled it while the attempt was on its way: at once
			retryNow = sameKey;
		}
		if (retryNow) {
			attempt();
		}
		else {
			listenThenRetry(current, blocking);
		}
	}

	/**
	 * Waits for releases of another key now: leaves the old one, listens to the new one
	 * (readying the channel may block: this runs on a worker) and tries again once
	 * notifications flow, as the blocking loop does.
	 */
	private void listenThenRetry(Waiters.Waiter previous, String key) {
		if (previous != null) {
			this.waiters.unregister(previous, false);
		}
		this.backend.prepareListening();
		Waiters.AsyncRegistration registration = this.waiters.registerAsync(key, this);
		boolean done;
		synchronized (this) {
			this.waiter = registration.waiter();
			done = this.finished;
		}
		if (done) {
			this.waiters.unregister(registration.waiter(), false);
			return;
		}
		CompletableFuture<?> listening = registration.listening();
		listening.orTimeout(this.backend.commandTimeout().toNanos(), TimeUnit.NANOSECONDS)
			.whenCompleteAsync((subscribed, failure) -> {
				if (failure != null) {
					// records a refusal (then waiters poll); the future is done: no wait
					this.backend.awaitListening(listening);
				}
				attempt();
			}, this.threads.workers());
	}

	private void granted(LockBackend.Attempt attempt, long sent) {
		Lease lease = this.engine.granted(this.id, attempt.fencingTokens(), this.owner, this.lockName, this.leaseNanos,
				this.renewed, this.minHoldNanos, sent, TimeUnit.MILLISECONDS.toNanos(this.grantedMillis));
		LeaseHandle handle = new LeaseHandle(this.engine, this.id, List.of(lease), false);
		finish(LockObservationContext.ACQUIRED, attempt.fencingTokens()[0], null, true);
		if (!this.result.complete(handle)) {
			// cancelled while the grant was on its way
			handle.closeAsync();
		}
	}

	/** A failed attempt: undone, and retried after a back-off while the wait lasts. */
	private void failed(LockException failure) {
		// the command may still run later (a lost reply, a replay after reconnect)
		this.backend.releaseQuietly(this.id, this.owner);
		long left = this.waitNanos - (System.nanoTime() - this.start);
		synchronized (this) {
			this.attempting = false;
			this.failures++;
			if (left > 0 && !this.finished) {
				long delay = ThreadLocalRandom.current().nextLong(this.retryMillis / 2, this.retryMillis + 1);
				this.retryMillis = Math.min(MAX_RETRY_MILLIS, this.retryMillis * 2);
				this.timer = this.threads.schedule(this::attempt, Math.min(left, TimeUnit.MILLISECONDS.toNanos(delay)));
				return;
			}
		}
		fail((this.failures == 1) ? failure
				: new LockException("Could not acquire lock '" + this.id.display() + "' within its wait time: "
						+ this.failures + " attempts failed, the last with: " + failure.getMessage(), failure));
	}

	private void fail(LockException failure) {
		if (finish(LockObservationContext.ERROR, -1, failure, false)) {
			this.result.completeExceptionally(failure);
		}
	}

	/**
	 * Ends the acquisition once: no more timers, leaves the waiters, stops the
	 * observation.
	 * @return whether this call ended it
	 */
	private boolean finish(String outcome, long fencingToken, Throwable failure, boolean acquired) {
		Waiters.Waiter current;
		synchronized (this) {
			if (this.finished) {
				return false;
			}
			this.finished = true;
			cancelTimer();
			current = this.waiter;
			this.waiter = null;
		}
		if (current != null) {
			this.waiters.unregister(current, acquired);
		}
		this.engine.observations().stopAcquire(this.observation, outcome, fencingToken, failure);
		return true;
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	@Override
	public void signalled() {
		submit();
	}

	@Override
	public void promoted() {
		// the head re-checks sooner (the holder's lease, the periodic re-check): try
		// once now, which schedules that
		submit();
	}

	/** Called under the waiters' monitor: hands over, never takes this one's. */
	private void submit() {
		try {
			this.threads.workers().execute(this::attempt);
		}
		catch (LockException ex) {
			// the engine is closing
			CompletableFuture.runAsync(() -> fail(ex));
		}
	}

	private static LockException unwrap(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return (cause instanceof LockException lockException) ? lockException
				: new LockException("Acquiring the lock failed: " + cause.getMessage(), cause);
	}

}
