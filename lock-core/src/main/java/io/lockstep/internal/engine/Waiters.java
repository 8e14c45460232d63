package io.lockstep.internal.engine;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parks threads waiting for a lock until it is released. The backend delivers release
 * notifications (Redis pub/sub, or in-process for the JVM-local backend) for the keys
 * that have local waiters; a release wakes the longest-waiting local waiter of the key,
 * and a woken waiter that leaves the key without the lock passes a wake-up on to the
 * next. Notifications are hints: a woken waiter re-runs the atomic acquire, and every
 * wait is also bounded by the holder's remaining lease. Without notifications (refused by
 * the server) waiters poll with jittered exponential backoff.
 *
 * <p>
 * Where the backend {@link LockBackend#handsOff hands off}, only the key's head waiter
 * asks the storage, queued there under its owner token; a release hands it the lock and
 * the hand-off message completes its wait ({@link #handedOff}), without a further round
 * trip. A key's notifications stay subscribed for {@value #LINGER_SECONDS} s after its
 * last local waiter left, so that steady contention costs no SUBSCRIBE per wait.
 */
final class Waiters {

	/** Longest park while notified, in case a notification was lost (a reconnect). */
	private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	static final long LINGER_SECONDS = 5;

	private static final Logger logger = LoggerFactory.getLogger(Waiters.class);

	private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(LINGER_SECONDS);

	/** At most this many keys stay subscribed without local waiters. */
	private static final int MAX_LINGERING = 1024;

	private final LockBackend backend;

	private final Map<String, ArrayDeque<Waiter>> waiting = new HashMap<>();

	/** Keys that a caller asks for now ({@link #beginAsking}). */
	private final Map<String, Boolean> asking = new HashMap<>();

	/**
	 * Keys subscribed without local waiters, by when their last waiter left; in order.
	 */
	private final Map<String, Long> lingering = new LinkedHashMap<>();

	private volatile boolean closed;

	private final ScheduledExecutorService scheduler;

	private boolean sweepScheduled;

	/**
	 * @param scheduler runs the task that stops listening to keys that lingered long
	 * enough
	 */
	Waiters(LockBackend backend, ScheduledExecutorService scheduler) {
		this.backend = backend;
		this.scheduler = scheduler;
		backend.onRelease(this::released);
	}

	/** A lock handed to a queued waiter. */
	record HandOff(long fencingToken, long leaseMillis) {
	}

	/** A thread waiting for one key. */
	final class Waiter {

		private final String key;

		/** The owner token it asks with; changes only under the monitor. */
		private String owner;

		private final Thread thread = Thread.currentThread();

		/** Set once, under the monitor, when the lock was handed to this waiter. */
		private volatile HandOff handOff;

		private volatile boolean signalled;

		/** Whether a release of the key woke this waiter while it waited for it. */
		private volatile boolean woken;

		private volatile boolean promoted;

		private long backoffNanos = MIN_BACKOFF_NANOS;

		private Waiter(String key, String owner) {
			this.key = key;
			this.owner = owner;
		}

		String key() {
			return this.key;
		}

		/** The lock handed to this waiter, if it was. */
		HandOff handOff() {
			return this.handOff;
		}

		/**
		 * It asks with a new owner token from now on (hand-offs to the old one are void).
		 */
		void owner(String owner) {
			synchronized (Waiters.this.waiting) {
				this.owner = owner;
			}
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
			while (!this.signalled && this.handOff == null && !Thread.currentThread().isInterrupted()
					&& !Waiters.this.closed) {
				if (this.promoted) {
					// the head now: it asks at once (and queues itself where the lock is
					// handed off)
					this.promoted = false;
					break;
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

		boolean isHead() {
			synchronized (Waiters.this.waiting) {
				ArrayDeque<Waiter> queue = Waiters.this.waiting.get(this.key);
				return queue != null && queue.peekFirst() == this;
			}
		}

		/** It is the head now: it takes over the re-checks. */
		private void promote() {
			this.promoted = true;
			LockSupport.unpark(this.thread);
		}

		private boolean signal() {
			if (this.signalled) {
				return false;
			}
			this.woken = true;
			this.signalled = true;
			LockSupport.unpark(this.thread);
			return true;
		}

	}

	/**
	 * Registers the current thread as a waiter for the key, listening for its releases
	 * first when it is the key's first local waiter. Try to acquire once more after this
	 * before parking.
	 */
	Waiter register(String key, String owner) {
		// outside the monitor: connecting may take up to the command timeout
		this.backend.prepareListening();
		Waiter waiter = new Waiter(key, owner);
		CompletableFuture<?> listening = null;
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.computeIfAbsent(key, (k) -> new ArrayDeque<>());
			if (queue.isEmpty() && this.lingering.remove(key) == null) {
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
				linger(waiter.key);
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

	/**
	 * Keeps the key subscribed for a while (its waiters may come back soon). Under the
	 * monitor.
	 */
	private void linger(String key) {
		this.lingering.put(key, System.nanoTime());
		sweep();
	}

	/**
	 * Stops listening to the keys that lingered long enough, or the longest lingering
	 * beyond {@value #MAX_LINGERING}; schedules the next sweep while keys linger. Under
	 * the monitor.
	 */
	private void sweep() {
		long now = System.nanoTime();
		Iterator<Map.Entry<String, Long>> oldest = this.lingering.entrySet().iterator();
		while (oldest.hasNext()) {
			Map.Entry<String, Long> entry = oldest.next();
			if (this.lingering.size() <= MAX_LINGERING && now - entry.getValue() < LINGER_NANOS) {
				break;
			}
			oldest.remove();
			this.backend.unlisten(entry.getKey());
		}
		if (!this.lingering.isEmpty() && !this.sweepScheduled && !this.closed) {
			long due = this.lingering.values().iterator().next() + LINGER_NANOS - now;
			try {
				this.scheduler.schedule(this::scheduledSweep, Math.max(due, 0) + 1_000_000L, TimeUnit.NANOSECONDS);
				this.sweepScheduled = true;
			}
			catch (RejectedExecutionException ex) {
				// shutting down: closing the backend ends every subscription
			}
		}
	}

	private void scheduledSweep() {
		try {
			synchronized (this.waiting) {
				this.sweepScheduled = false;
				sweep();
			}
		}
		catch (Throwable ex) {
			logger.warn("Stopping to listen to released keys failed; retrying later", ex);
		}
	}

	/**
	 * A caller is about to ask for the key, unless local callers ask for it or wait for
	 * it already: then it should {@link #register} and wait for its turn, so that many
	 * callers of one key cost a few attempts, not one each. Ended by {@link #endAsking}.
	 * @return whether to ask
	 */
	boolean beginAsking(String key) {
		synchronized (this.waiting) {
			if (this.waiting.containsKey(key) || this.asking.containsKey(key)) {
				return false;
			}
			this.asking.put(key, Boolean.TRUE);
			return true;
		}
	}

	void endAsking(String key) {
		synchronized (this.waiting) {
			this.asking.remove(key);
		}
	}

	/**
	 * The lock was handed to a queued owner: its waiter takes it when it wakes.
	 * @return whether a waiter of this process asks with that owner token
	 */
	boolean handedOff(String key, String owner, long fencingToken, long leaseMillis) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				for (Waiter waiter : queue) {
					if (waiter.owner.equals(owner)) {
						waiter.handOff = new HandOff(fencingToken, leaseMillis);
						waiter.woken = true;
						waiter.signalled = true;
						LockSupport.unpark(waiter.thread);
						return true;
					}
				}
			}
			return false;
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
			this.lingering.clear();
			this.waiting.values().forEach((queue) -> queue.forEach(Waiter::signal));
		}
	}

}
