package io.lockstep.internal.engine;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Parks threads waiting for a lock until it is released. The backend delivers release
 * notifications (Redis pub/sub, or in-process for the JVM-local backend) for the keys
 * that have local waiters; a release wakes the longest-waiting local waiter of the key,
 * and a woken waiter that leaves the key without the lock passes a wake-up on to the
 * next. Notifications are hints: a woken waiter re-runs the atomic acquire, and every
 * wait is also bounded by the holder's remaining lease. Without notifications (refused by
 * the server) waiters poll with jittered exponential backoff.
 */
final class Waiters {

	/** Longest park while notified, in case a notification was lost (a reconnect). */
	private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final LockBackend backend;

	private final Map<String, ArrayDeque<Waiter>> waiting = new HashMap<>();

	private volatile boolean closed;

	Waiters(LockBackend backend) {
		this.backend = backend;
		backend.onRelease(this::released);
	}

	/**
	 * Told, instead of unparking a thread, when an asynchronous waiter is signalled or
	 * promoted; called under the waiters' monitor, possibly on the storage client's I/O
	 * thread, so it only hands over to another thread.
	 */
	interface Wakeable {

		/** A release may have freed the key: try again. */
		void signalled();

		/** It became the key's head waiter: it takes over the re-checks. */
		void promoted();

	}

	/** A thread (or an asynchronous acquisition) waiting for one key. */
	final class Waiter {

		private final String key;

		private final Thread thread;

		private final Wakeable wakeable;

		private volatile boolean signalled;

		/** Whether a release of the key woke this waiter while it waited for it. */
		private volatile boolean woken;

		private volatile boolean promoted;

		private long backoffNanos = MIN_BACKOFF_NANOS;

		private Waiter(String key) {
			this.key = key;
			this.thread = Thread.currentThread();
			this.wakeable = null;
		}

		private Waiter(String key, Wakeable wakeable) {
			this.key = key;
			this.thread = null;
			this.wakeable = wakeable;
		}

		String key() {
			return this.key;
		}

		/**
		 * Parks until signalled or {@code maxNanos}. Only the key's longest-waiting local
		 * waiter (the head) also wakes when the holder's lease may have run out, for a
		 * periodic re-check, or to poll where notifications are refused: the others sleep
		 * until a release or until they become the head, so many waiters in one process
		 * cost one attempt per release, not one each.
		 * @param holderTtlMillis the holder's remaining lease as the failed attempt saw
		 * it (negative: unknown)
		 */
		void await(long maxNanos, long holderTtlMillis) {
			long start = System.nanoTime();
			long until = start + (isHead() ? headPark(maxNanos, holderTtlMillis) : maxNanos);
			while (!this.signalled && !Thread.currentThread().isInterrupted() && !Waiters.this.closed) {
				if (this.promoted) {
					this.promoted = false;
					until = Math.min(until, System.nanoTime() + headPark(maxNanos, -1));
				}
				long left = until - System.nanoTime();
				if (left <= 0) {
					break;
				}
				LockSupport.parkNanos(this, left);
			}
			this.signalled = false;
		}

		private long headPark(long maxNanos, long holderTtlMillis) {
			long park = maxNanos;
			if (holderTtlMillis >= 0) {
				park = Math.min(park, TimeUnit.MILLISECONDS.toNanos(holderTtlMillis) + 1_000_000L);
			}
			if (!Waiters.this.backend.notifies()) {
				park = Math.min(park,
						ThreadLocalRandom.current().nextLong(this.backoffNanos / 2, this.backoffNanos + 1));
				this.backoffNanos = Math.min(MAX_BACKOFF_NANOS, this.backoffNanos * 2);
				return park;
			}
			return Math.min(park, RECHECK_NANOS);
		}

		/**
		 * For an asynchronous waiter about to try again: the next release signals it
		 * again (a blocking waiter re-arms when it wakes).
		 */
		void rearm() {
			this.signalled = false;
		}

		/**
		 * For an asynchronous waiter: how long to wait before re-trying unwoken, as
		 * {@link #await} parks.
		 */
		long waitNanos(long maxNanos, long holderTtlMillis) {
			return isHead() ? headPark(maxNanos, holderTtlMillis) : maxNanos;
		}

		private boolean isHead() {
			synchronized (Waiters.this.waiting) {
				ArrayDeque<Waiter> queue = Waiters.this.waiting.get(this.key);
				return queue != null && queue.peekFirst() == this;
			}
		}

		/** It is the head now: it takes over the re-checks. */
		private void promote() {
			this.promoted = true;
			if (this.thread != null) {
				LockSupport.unpark(this.thread);
			}
			else {
				this.wakeable.promoted();
			}
		}

		private boolean signal() {
			if (this.signalled) {
				return false;
			}
			this.woken = true;
			this.signalled = true;
			if (this.thread != null) {
				LockSupport.unpark(this.thread);
			}
			else {
				this.wakeable.signalled();
			}
			return true;
		}

	}

	/**
	 * Registers the current thread as a waiter for the key, listening for its releases
	 * first when it is the key's first local waiter. Try to acquire once more after this
	 * before parking.
	 */
	Waiter register(String key) {
		// outside the monitor: connecting may take up to the command timeout
		this.backend.prepareListening();
		Waiter waiter = new Waiter(key);
		CompletableFuture<?> listening = null;
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.computeIfAbsent(key, (k) -> new ArrayDeque<>());
			if (queue.isEmpty()) {
				// sent (not awaited) under the monitor, so that listen and unlisten keep
				// their order
				listening = this.backend.listen(key);
			}
			queue.addLast(waiter);
		}
		if (listening != null) {
			this.backend.awaitListening(listening);
		}
		return waiter;
	}

	/**
	 * Registers an asynchronous waiter for the key, like {@link #register} but without
	 * blocking: the caller readies the notification channel first
	 * ({@link LockBackend#prepareListening()}, on a thread that may block) and tries to
	 * acquire once more when {@code listening} completes. It leaves by
	 * {@link #unregister}; a signal after {@link Wakeable#signalled()} needs
	 * {@link Waiter#rearm()}.
	 */
	AsyncRegistration registerAsync(String key, Wakeable wakeable) {
		Waiter waiter = new Waiter(key, wakeable);
		CompletableFuture<?> listening = CompletableFuture.completedFuture(null);
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.computeIfAbsent(key, (k) -> new ArrayDeque<>());
			if (queue.isEmpty()) {
				listening = this.backend.listen(key);
			}
			queue.addLast(waiter);
		}
		return new AsyncRegistration(waiter, listening);
	}

	/**
	 * An asynchronous waiter and its subscription.
	 *
	 * @param waiter the waiter
	 * @param listening completes when notifications of the key flow
	 */
	record AsyncRegistration(Waiter waiter, CompletableFuture<?> listening) {
	}

	/**
	 * The waiter leaves; when it leaves the key without the lock after a release woke it
	 * (it timed out, failed, or waits for another key of its lock now), a wake-up goes to
	 * the next waiter: the key may be free. A spare wake-up costs one attempt.
	 */
	void unregister(Waiter waiter, boolean acquired) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(waiter.key);
			if (queue == null) {
				return;
			}
			boolean wasHead = queue.peekFirst() == waiter;
			if (!queue.remove(waiter)) {
				return;
			}
			if (queue.isEmpty()) {
				this.waiting.remove(waiter.key);
				this.backend.unlisten(waiter.key);
				return;
			}
			if (!acquired && waiter.woken) {
				signalFirst(queue);
			}
			else if (wasHead) {
				queue.peekFirst().promote();
			}
		}
	}

	/** The key was released: wake its longest-waiting local waiter not yet woken. */
	void released(String key) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				signalFirst(queue);
			}
		}
	}

	private static void signalFirst(ArrayDeque<Waiter> queue) {
		for (Waiter waiter : queue) {
			if (waiter.signal()) {
				return;
			}
		}
	}

	/** Keys with local waiters now. */
	int keysWaitedFor() {
		synchronized (this.waiting) {
			return this.waiting.size();
		}
	}

	void close() {
		this.closed = true;
		synchronized (this.waiting) {
			this.waiting.values().forEach((queue) -> queue.forEach(Waiter::signal));
		}
	}

}
