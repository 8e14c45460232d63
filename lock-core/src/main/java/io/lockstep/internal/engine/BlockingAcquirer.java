package io.lockstep.internal.engine;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

import io.lockstep.LockException;

/**
 * Drives an {@link Acquisition} on the caller's thread: attempts are sent and awaited
 * there (bounded by the command timeout), and the thread parks while it waits, until an
 * event reaches its inbox, the wait's timer runs out, or it is interrupted (which aborts
 * the acquisition and keeps the interrupt). The uncontended path is one attempt, with no
 * other thread and no registration.
 */
final class BlockingAcquirer {

	private final Thread thread = Thread.currentThread();

	private final Queue<Acquisition.Event> inbox = new ConcurrentLinkedQueue<>();

	private final AcquisitionRun run;

	/**
	 * @param held the leases of the request's keys the call holds already
	 */
	BlockingAcquirer(AcquireContext context, LockRequest request, List<Lease> held) {
		this.run = new AcquisitionRun(context, request, held, this::post);
	}

	/**
	 * @return the handle (bound to this thread), or {@code null} when the wait elapsed
	 * while another owner held the lock
	 * @throws LockException when an attempt failed (at once: not retried), or the wait
	 * was interrupted
	 */
	LeaseHandle acquire() {
		Acquisition.Effect action = null;
		try {
			action = this.run.start().orElseThrow();
			while (!(action instanceof Acquisition.Done)) {
				action = next(action);
			}
		}
		catch (RuntimeException | Error ex) {
			this.run.endAfter(ex, true, () -> false);
			throw ex;
		}
		Acquisition.Done done = (Acquisition.Done) action;
		LeaseHandle handle = this.run.conclude(done, true, () -> false);
		if (done.failure() != null) {
			throw done.failure();
		}
		return handle;
	}

	private Acquisition.Effect next(Acquisition.Effect action) {
		if (action instanceof Acquisition.Send send) {
			return inOrder(this.run.attempt(send), action);
		}
		if (action instanceof Acquisition.Register register) {
			return inOrder(this.run.register(register), action);
		}
		return await((Acquisition.Wait) action);
	}

	/**
	 * Feeds what came while it asked or registered, then the answer: news that came
	 * before the answer was handled is taken as older than it. The last action of them
	 * all is the next.
	 */
	private Acquisition.Effect inOrder(Acquisition.Event answer, Acquisition.Effect asked) {
		Acquisition.Effect latest = null;
		for (Acquisition.Event event = this.inbox.poll(); event != null; event = this.inbox.poll()) {
			latest = this.run.feed(event).orElse(latest);
		}
		latest = this.run.feed(answer).orElse(latest);
		if (latest == null) {
			throw new IllegalStateException(
					"The acquisition of '" + this.run.id().display() + "' answered " + asked + " with nothing to do");
		}
		return latest;
	}

	private Acquisition.Effect await(Acquisition.Wait wait) {
		while (true) {
			Acquisition.Event event = this.inbox.poll();
			if (event != null) {
				return this.run.feed(event).orElse(wait);
			}
			if (this.thread.isInterrupted()) {
				return this.run
					.feed(new Acquisition.Aborted(
							new LockException("Interrupted while waiting for lock '" + this.run.id().display() + "'")))
					.orElse(wait);
			}
			long left = wait.untilNanos() - System.nanoTime();
			if (left <= 0) {
				return this.run.feed(new Acquisition.TimerFired(wait.timer())).orElse(wait);
			}
			LockSupport.parkNanos(this, left);
		}
	}

	private void post(Acquisition.Event event) {
		this.inbox.add(event);
		LockSupport.unpark(this.thread);
	}

}
