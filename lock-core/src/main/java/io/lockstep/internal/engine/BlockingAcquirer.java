package io.lockstep.internal.engine;

import java.util.concurrent.locks.LockSupport;

import io.lockstep.LockException;

/**
 * Drives an {@link Acquisition} on the caller's thread: attempts are sent and awaited
 * there (bounded by the command timeout), and the thread parks while it waits, until an
 * event reaches its inbox, the wait's timer runs out, or it is interrupted (which aborts
 * the acquisition and keeps the interrupt). The uncontended path is one attempt, with no
 * other thread and no registration.
 */
final class BlockingAcquirer extends Acquirer {

	private final Thread thread = Thread.currentThread();

	BlockingAcquirer(AcquireContext context, LockId id, String lockName, long waitNanos, HoldTerms hold,
			boolean skips) {
		super(context, id, lockName, waitNanos, hold, skips);
	}

	/**
	 * @return the lease, or {@code null} when the wait elapsed while another owner held
	 * the lock
	 * @throws LockException when an attempt failed (at once: not retried), or the wait
	 * was interrupted
	 */
	Lease acquire() {
		Acquisition.Action action = null;
		try {
			action = begin();
			while (!(action instanceof Acquisition.Done)) {
				action = next(action);
			}
		}
		catch (RuntimeException | Error ex) {
			if (!ended()) {
				action = feed(new Acquisition.Aborted(asLockException(ex)));
				conclude((Acquisition.Done) action, false);
			}
			throw ex;
		}
		Acquisition.Done done = (Acquisition.Done) action;
		Lease lease = conclude(done, false);
		if (done.failure() != null) {
			throw done.failure();
		}
		return lease;
	}

	private Acquisition.Action next(Acquisition.Action action) {
		if (action instanceof Acquisition.Send send) {
			return inOrder(attempt(send));
		}
		if (action instanceof Acquisition.Register register) {
			unregister(false);
			this.waiter = this.waiters.register(register.key(), register.owner(), register.handOff(), this);
			return inOrder(new Acquisition.Registered(this.waiters.isHead(this.waiter)));
		}
		return await((Acquisition.Wait) action);
	}

	private Acquisition.Event attempt(Acquisition.Send send) {
		try {
			return replied(this.store.acquire(request(send)));
		}
		catch (LockException ex) {
			return new Acquisition.AttemptFailed(ex);
		}
	}

	/**
	 * Feeds what came while it asked or registered, then the answer: news that came
	 * before the answer was handled is taken as older than it.
	 */
	private Acquisition.Action inOrder(Acquisition.Event answer) {
		Acquisition.Action latest = null;
		for (Acquisition.Event event = this.inbox.poll(); event != null; event = this.inbox.poll()) {
			Acquisition.Action action = feed(event);
			latest = (action != null) ? action : latest;
		}
		Acquisition.Action action = feed(answer);
		return (latest instanceof Acquisition.Done || action == null) ? latest : action;
	}

	private Acquisition.Action await(Acquisition.Wait wait) {
		while (true) {
			Acquisition.Event event = this.inbox.poll();
			if (event != null) {
				return feed(event);
			}
			if (this.thread.isInterrupted()) {
				return feed(new Acquisition.Aborted(
						new LockException("Interrupted while waiting for lock '" + this.id.display() + "'")));
			}
			long left = wait.untilNanos() - System.nanoTime();
			if (left <= 0) {
				return feed(new Acquisition.TimerFired(wait.timer()));
			}
			LockSupport.parkNanos(this, left);
		}
	}

	@Override
	void post(Acquisition.Event event) {
		this.inbox.add(event);
		LockSupport.unpark(this.thread);
	}

}
