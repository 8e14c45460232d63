package io.lockstep.internal.engine;

import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives an {@link Acquisition} without a thread of its own while it waits: attempts by
 * the store's asynchronous API, waits by the engine's timer, and every event (a reply, a
 * registration, a wake-up, a timer, a cancel) fed to the machine one at a time on the
 * engine's worker threads, in the order they came (a lock-free inbox with one drainer at
 * a time). The caller's future completes on a worker, never on the storage client's I/O
 * threads. Cancelling it aborts the acquisition; a grant that races with the cancel is
 * released.
 */
final class AsyncAcquirer {

	private static final Logger logger = LoggerFactory.getLogger(AsyncAcquirer.class);

	private final AsyncThreads threads;

	private final Queue<Acquisition.Event> inbox = new ConcurrentLinkedQueue<>();

	private final AcquisitionRun run;

	private final CompletableFuture<LeaseHandle> result = new CompletableFuture<>();

	/** Events posted and not yet fed; the one that raises it from 0 drains. */
	private final AtomicInteger pending = new AtomicInteger();

	// touched only by the drainer

	private ScheduledFuture<?> timer;

	/** The attempt on its way, if any: an abort cancels it before it undoes it. */
	private @Nullable CompletableFuture<?> attempt;

	private long timerNumber;

	AsyncAcquirer(AcquireContext context, LockRequest request) {
		this.run = new AcquisitionRun(context, request, List.of(), this::post);
		this.threads = context.threads().get();
	}

	/**
	 * Starts on the caller's thread when the first action only sends an attempt (which
	 * never blocks), else on a worker.
	 */
	CompletableFuture<LeaseHandle> start() {
		this.pending.set(1);
		Optional<Acquisition.Effect> first;
		try {
			first = this.run.start();
		}
		catch (Throwable ex) {
			// the caller is told through the future; the run ends (and the key's gate)
			abort(ex);
			return this.result;
		}
		this.result.whenComplete((handle, failure) -> {
			if (failure instanceof CancellationException) {
				cancelled();
			}
		});
		if (first.isPresent() && first.get() instanceof Acquisition.Send) {
			safely(first);
			if (this.pending.decrementAndGet() != 0) {
				this.threads.workers().execute(this::drain);
			}
		}
		else {
			this.threads.workers().execute(() -> {
				safely(first);
				if (this.pending.decrementAndGet() != 0) {
					drain();
				}
			});
		}
		return this.result;
	}

	private void post(Acquisition.Event event) {
		this.inbox.add(event);
		if (this.pending.getAndIncrement() == 0) {
			try {
				this.threads.workers().execute(this::drain);
			}
			catch (LockException ex) {
				// the engine closed: nothing runs it any more
				this.result.completeExceptionally(ex);
			}
		}
	}

	/**
	 * The caller cancelled: aborted on the cancelling thread when no other event is being
	 * fed (the abort only unregisters and sends the undo, without waiting), so that the
	 * acquisition has left its queues when {@code cancel} returns; else it leaves the
	 * local queue now and is aborted after the events before it.
	 */
	private void cancelled() {
		this.inbox.add(new Acquisition.Aborted(
				new LockException("Acquiring lock '" + this.run.id().display() + "' was cancelled")));
		if (this.pending.getAndIncrement() == 0) {
			drain();
		}
		else {
			// the drainer aborts it next; it stops waiting now
			this.run.leaveQueueNow();
		}
	}

	private void drain() {
		do {
			Acquisition.Event event = this.inbox.poll();
			if (event != null) {
				if (event instanceof Acquisition.Aborted) {
					dropAttempt();
				}
				try {
					safely(this.run.feed(event));
				}
				catch (Throwable ex) {
					abort(ex);
				}
			}
		}
		while (this.pending.decrementAndGet() != 0);
	}

	/** Acts; a failure (whatever it is) aborts the acquisition. */
	private void safely(Optional<Acquisition.Effect> action) {
		try {
			action.ifPresent(this::act);
		}
		catch (Throwable ex) {
			abort(ex);
		}
	}

	/** Aborts after a failure while acting: the caller's future always completes. */
	private void abort(Throwable failure) {
		try {
			if (!this.run.ended()) {
				dropAttempt();
				this.run.feed(new Acquisition.Aborted(AcquisitionRun.asLockException(failure))).ifPresent(this::act);
			}
			else {
				logger.warn("Ending the acquisition of '{}' failed", this.run.id().display(), failure);
			}
			// the machine's end, if acting on it failed (or the abort's did)
			LeaseHandle handle = this.run.endAfter(failure, false, this.result::isCancelled);
			if (handle != null && !this.result.complete(handle)) {
				handle.closeAsync();
			}
		}
		catch (Throwable ex) {
			logger.error("Aborting the acquisition of '{}' failed", this.run.id().display(), ex);
		}
		finally {
			this.result.completeExceptionally(AcquisitionRun.asLockException(failure));
		}
	}

	private void act(Acquisition.Effect action) {
		if (action instanceof Acquisition.Send send) {
			cancelTimer();
			this.attempt = this.run.attemptAsync(send, this.threads.workers(), this::post);
		}
		else if (action instanceof Acquisition.Register register) {
			cancelTimer();
			this.run.registerAsync(register);
		}
		else if (action instanceof Acquisition.Wait wait) {
			schedule(wait);
		}
		else if (action instanceof Acquisition.Done done) {
			cancelTimer();
			finish(done);
		}
	}

	private void schedule(Acquisition.Wait wait) {
		if (this.timer != null && this.timerNumber == wait.timer()) {
			return;
		}
		cancelTimer();
		this.timerNumber = wait.timer();
		this.timer = this.threads.schedule(() -> post(new Acquisition.TimerFired(wait.timer())),
				wait.untilNanos() - System.nanoTime());
	}

	/**
	 * Before an abort: the attempt on its way is cancelled, so that, where the store can
	 * drop what it has not sent (see {@link LockStore#acquireAsync}), it sends nothing
	 * more (no later group, no script again after a {@code NOSCRIPT}) and the abort's
	 * undo runs after all of it. Its reply then comes as a failure, which the ended
	 * acquisition ignores.
	 */
	private void dropAttempt() {
		if (this.attempt != null) {
			this.attempt.cancel(false);
			this.attempt = null;
		}
	}

	private void cancelTimer() {
		if (this.timer != null) {
			this.timer.cancel(false);
			this.timer = null;
		}
	}

	private void finish(Acquisition.Done done) {
		LeaseHandle handle = this.run.conclude(done, false, this.result::isCancelled);
		if (handle != null) {
			if (!this.result.complete(handle)) {
				// cancelled while the grant was on its way
				handle.closeAsync();
			}
		}
		else if (done.failure() != null) {
			this.result.completeExceptionally(done.failure());
		}
		else {
			this.result.complete(null);
		}
	}

}
