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
 * One acquisition that waits without a thread ({@link LockEngine#acquireAsync}): the
 * blocking loop's protocol, step by step. It asks once by the backend's asynchronous API
 * (queued already when it is the key's first local caller and hand-offs reach this
 * client); while another owner holds the lock it is a {@link Waiters} entry of the
 * blocking key, in arrival order with the blocking waiters; as the key's head it asks
 * again queued for a direct hand-off where the backend hands off (then the hand-off
 * message completes it, without another round trip). It asks again when a release
 * notification or a hand-off signals it, when it becomes the head, and otherwise by a
 * timer bounded by the holder's remaining lease and the periodic re-check (or jittered
 * back-off where notifications are refused), exactly as a parked thread would wake. A
 * failed attempt is "not yet" while the wait lasts (jittered back-off, doubling from 20
 * ms to 500 ms).
 *
 * <p>
 * Threads: replies are handled on the engine's worker threads, never on the storage
 * client's I/O threads, and the future completes there; timers run on the engine's timer
 * thread. At most one attempt is on its way at a time. Cancelling the future stops the
 * waiting and leaves the queue; a grant that races with the cancellation is released.
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

	private final long grantedMillis;

	private final long maxHoldMillis;

	private final CompletableFuture<LeaseHandle> result = new CompletableFuture<>();

	private final long start = System.nanoTime();

	private Observation observation;

	// guarded by this

	/** The owner token it asks with; a new one after a queued attempt failed. */
	private String owner;

	/** The send time of the last attempt that left it queued, or 0. */
	private long queuedSent;

	private boolean attempting;

	/** Whether the attempt on its way queues the owner (it is the key's head). */
	private boolean queueing;

	/**
	 * The key its first attempt asks for as the key's first local caller
	 * ({@link Waiters#beginAsking}), until that attempt's reply; else {@code null}.
	 */
	private String asking;

	private boolean askedBefore;

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

	/**
	 * Takes a lock handed to it, or asks once (queued when it is the key's head), or asks
	 * for another round after the attempt on its way. Never blocks.
	 */
	private void attempt() {
		Waiters.Waiter current;
		String asking;
		boolean queued;
		long entryMillis = 0;
		long sent = System.nanoTime();
		Waiters.HandOff handOff;
		synchronized (this) {
			if (this.finished) {
				return;
			}
			if (this.attempting) {
				this.again = true;
				return;
			}
			cancelTimer();
			current = this.waiter;
			handOff = (current != null) ? current.handOff() : null;
			this.attempting = true;
			this.again = false;
			asking = this.owner;
			queued = this.queuedSent != 0;
			long waitLeftMillis = TimeUnit.NANOSECONDS.toMillis(this.waitNanos - (sent - this.start));
			if (current != null && current.isHead() && waitLeftMillis > 0) {
				// only a key's head waiter queues itself (or marks the key as waited for)
				entryMillis = Math.min(waitLeftMillis, LockEngine.QUEUE_ENTRY_MILLIS);
			}
			else if (queuesFirst(current, waitLeftMillis)) {
				// the key's first local caller, where hand-offs reach this client
				// already, queues with its first attempt (as the blocking loop does): it
				// registers after the reply, and a hand-off that came first waits for it
				entryMillis = Math.min(waitLeftMillis, LockEngine.QUEUE_ENTRY_MILLIS);
			}
			this.askedBefore = true;
			this.queueing = entryMillis > 0;
		}
		if (handOff != null) {
			// taken once: the attempting flag stays set, and it finishes
			handedOff(handOff);
			return;
		}
		if (current != null) {
			current.rearm();
		}
		long entry = entryMillis;
		CompletableFuture<LockBackend.Attempt> reply;
		try {
			reply = this.backend.tryAcquireAsync(this.id, asking, this.grantedMillis, this.maxHoldMillis, entry,
					LockEngine.handOffMillis(this.grantedMillis, this.renewed), queued, this.threads.workers());
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		try {
			reply.whenCompleteAsync((attempt, failure) -> {
				try {
					replied(attempt, failure, sent, asking, entry);
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

	/**
	 * Whether this first attempt queues: a one-key lock whose backend hands off to this
	 * client's channel, which it hears already, and no other local caller of the key.
	 * Under this one's monitor.
	 */
	private boolean queuesFirst(Waiters.Waiter current, long waitLeftMillis) {
		if (current != null || this.askedBefore || this.id.size() != 1 || waitLeftMillis <= 0
				|| !this.backend.handsOff() || !this.backend.hearsHandOffs(this.id.first())
				|| !this.waiters.beginAsking(this.id.first())) {
			return false;
		}
		this.asking = this.id.first();
		return true;
	}

	/** Ends the first attempt's {@link Waiters#beginAsking}, once. */
	private void endAsking() {
		String key;
		synchronized (this) {
			key = this.asking;
			this.asking = null;
		}
		if (key != null) {
			this.waiters.endAsking(key);
		}
	}

	/** On a worker thread. */
	private void replied(LockBackend.Attempt attempt, Throwable failure, long sent, String asking, long entryMillis) {
		endAsking();
		if (this.result.isDone()) {
			// cancelled meanwhile: a grant, a queue entry, or a failed attempt that may
			// still run, is undone
			if (failure != null || attempt.acquired() || entryMillis > 0) {
				this.backend.leave(this.id, asking);
			}
			return;
		}
		if (failure != null) {
			failed(unwrap(failure), asking, entryMillis);
			return;
		}
		if (attempt.acquired()) {
			granted(attempt, sent);
			return;
		}
		long waited = System.nanoTime() - this.start;
		String blocking = this.id.keys().get(Math.max(0, attempt.blockingIndex()));
		Waiters.Waiter current;
		boolean retryNow;
		synchronized (this) {
			this.attempting = false;
			this.queueing = false;
			this.retryMillis = MIN_RETRY_MILLIS;
			if (entryMillis > 0) {
				this.queuedSent = sent;
			}
			if (this.finished) {
				return;
			}
			current = this.waiter;
			boolean sameKey = current != null && current.key().equals(blocking);
			if (waited < this.waitNanos && sameKey && !this.again && current.handOff() == null) {
				this.timer = this.threads.schedule(this::submit,
						current.waitNanos(this.waitNanos - waited, attempt.holderTtlMillis()));
				return;
			}
			// signalled (a release, a hand-off) while the attempt was on its way: at once
			retryNow = sameKey && (this.again || current.handOff() != null);
		}
		if (retryNow) {
			attempt();
		}
		else if (waited >= this.waitNanos) {
			if (finish(LockObservationContext.TIMEOUT, -1, null, false)) {
				this.result.complete(null);
			}
		}
		else {
			listenThenRetry(current, blocking, attempt.holderTtlMillis());
		}
	}

	/**
	 * Waits for releases of another key now: leaves the old one, listens to the new one
	 * (readying the channel may block: this runs on a worker) and, once notifications
	 * flow, asks again if it is the key's head and not queued already (a queued owner's
	 * hand-off comes as a message), as the blocking loop does; the others wait for their
	 * turn.
	 */
	private void listenThenRetry(Waiters.Waiter previous, String key, long holderTtlMillis) {
		if (previous != null) {
			this.waiters.unregister(previous, false);
		}
		this.backend.prepareListening();
		Waiters.AsyncRegistration registration;
		boolean done;
		synchronized (this) {
			registration = this.waiters.registerAsync(key, this.owner, this.id.size() == 1 && this.backend.handsOff(),
					this);
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
				Waiters.Waiter registered = registration.waiter();
				boolean queued;
				synchronized (this) {
					queued = this.queuedSent != 0;
				}
				if (registered.handOff() != null || (registered.isHead() && !queued)) {
					attempt();
				}
				else {
					waitForTurn(registered, holderTtlMillis);
				}
			}, this.threads.workers());
	}

	/**
	 * Not the head, or queued already: until a release, a promotion, a hand-off or the
	 * end of the wait (re-checked by the holder's remaining lease, when known, as the
	 * head).
	 */
	private void waitForTurn(Waiters.Waiter current, long holderTtlMillis) {
		synchronized (this) {
			if (this.finished || this.attempting || this.timer != null || current.handOff() != null) {
				return;
			}
			this.timer = this.threads.schedule(this::submit,
					current.waitNanos(this.waitNanos - (System.nanoTime() - this.start), holderTtlMillis));
		}
	}

	/** The lock was handed to it while it was queued. */
	private void handedOff(Waiters.HandOff handOff) {
		String granted;
		long queued;
		synchronized (this) {
			granted = this.owner;
			queued = this.queuedSent;
		}
		long[] fences = { handOff.fencingToken() };
		Lease lease = this.engine.granted(this.id, fences, granted, this.lockName, this.leaseNanos, this.renewed,
				this.minHoldNanos, queued, TimeUnit.MILLISECONDS.toNanos(handOff.leaseMillis()));
		complete(lease, fences[0]);
	}

	private void granted(LockBackend.Attempt attempt, long sent) {
		String granted;
		synchronized (this) {
			granted = this.owner;
		}
		Lease lease = this.engine.granted(this.id, attempt.fencingTokens(), granted, this.lockName, this.leaseNanos,
				this.renewed, this.minHoldNanos, sent, TimeUnit.MILLISECONDS.toNanos(this.grantedMillis));
		complete(lease, attempt.fencingTokens()[0]);
	}

	private void complete(Lease lease, long fencingToken) {
		LeaseHandle handle = new LeaseHandle(this.engine, this.id, List.of(lease), false);
		finish(LockObservationContext.ACQUIRED, fencingToken, null, true);
		if (!this.result.complete(handle)) {
			// cancelled while the grant was on its way
			handle.closeAsync();
		}
	}

	/** A failed attempt: undone, and retried after a back-off while the wait lasts. */
	private void failed(LockException failure, String asking, long entryMillis) {
		// the command may still run later (a lost reply, a replay after reconnect)
		this.backend.leave(this.id, asking);
		long left = this.waitNanos - (System.nanoTime() - this.start);
		synchronized (this) {
			this.attempting = false;
			this.queueing = false;
			this.failures++;
			if (entryMillis > 0) {
				// a hand-off to the old token may still come: it is void
				this.owner = LockEngine.newOwner();
				if (this.waiter != null) {
					this.waiter.owner(this.owner);
				}
				this.queuedSent = 0;
			}
			if (left > 0 && !this.finished) {
				long delay = ThreadLocalRandom.current().nextLong(this.retryMillis / 2, this.retryMillis + 1);
				this.retryMillis = Math.min(MAX_RETRY_MILLIS, this.retryMillis * 2);
				this.timer = this.threads.schedule(this::submit, Math.min(left, TimeUnit.MILLISECONDS.toNanos(delay)));
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
		boolean leave;
		String leaving;
		synchronized (this) {
			if (this.finished) {
				return false;
			}
			this.finished = true;
			cancelTimer();
			current = this.waiter;
			this.waiter = null;
			// a queueing attempt on its way is left now, not when its reply comes: a
			// release sent after this leave then finds the owner gone from the queue
			leave = !acquired
					&& (this.queuedSent != 0 || this.queueing || (current != null && current.handOff() != null));
			leaving = this.owner;
		}
		endAsking();
		if (current != null) {
			this.waiters.unregister(current, acquired);
		}
		if (leave) {
			// it may be queued still, or the lock handed to it meanwhile
			this.backend.leave(this.id, leaving);
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

	/**
	 * Asks on a worker: called by timers, and under the waiters' monitor (never takes
	 * this one's).
	 */
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
