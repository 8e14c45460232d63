package io.lockstep.internal.engine;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local queues of the callers waiting for a lock, per key, in arrival order, and the
 * delivery of what wakes them. The backend delivers release notifications (Redis pub/sub,
 * or in-process for the JVM-local backend) for the keys that have local waiters; a
 * release wakes the longest-waiting local waiter of the key, and a woken waiter that
 * leaves the key without the lock passes a wake-up on to the next. Notifications are
 * hints: a woken waiter runs the atomic acquire again ({@link Acquisition} decides when).
 *
 * <p>
 * A key's waiters are of two kinds: those whose lock the backend
 * {@link LockBackend#handsOff hands off} (a one-key lock) and the others (a multi-key
 * lock, or no hand-off). The first waiter of each kind is its head: only the head asks
 * the storage while the others wait for a release or their promotion, so that one kind
 * never holds up the other. A hand-off head is queued in storage under its owner token; a
 * release hands it the lock and the hand-off message, on a channel of the client's own
 * subscribed once for its life, reaches it ({@link #handedOff}) without a further round
 * trip. Such waiters are not woken by releases where notifications work (the lock went to
 * the queue's first live waiter, which hears of it). Waiters of other locks listen on the
 * key's channel, which stays subscribed for {@value #LINGER_SECONDS} s after its last
 * local waiter left, so that steady contention costs no SUBSCRIBE per wait.
 *
 * <p>
 * Everything a waiter hears goes to its {@link Wake}, called under this object's monitor,
 * possibly on the storage client's I/O thread: a wake only hands the news over.
 */
final class Waiters {

	static final long LINGER_SECONDS = 5;

	private static final Logger logger = LoggerFactory.getLogger(Waiters.class);

	private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(LINGER_SECONDS);

	/** At most this many keys stay subscribed without local waiters. */
	private static final int MAX_LINGERING = 1024;

	private final LockBackend backend;

	/** The local waiters of each key; changed under its own monitor, read without. */
	private final Map<String, ArrayDeque<Waiter>> waiting = new ConcurrentHashMap<>();

	/** Keys whose release channel is subscribed (waited for, or lingering). */
	private final Set<String> listened = new HashSet<>();

	/**
	 * Hand-offs to owner tokens no local waiter asks with (yet): a caller that queued
	 * with its first attempt registers after the reply, and the hand-off may come first.
	 * By arrival, oldest first; under the monitor.
	 */
	private final Map<String, Unclaimed> unclaimed = new LinkedHashMap<>();

	/** Keys that a caller asks for now ({@link #beginAsking}). */
	private final Set<String> asking = ConcurrentHashMap.newKeySet();

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

	/** A hand-off that found no waiter, and when it came. */
	private record Unclaimed(String key, long fencingToken, long leaseMillis, long receivedNanos) {
	}

	/**
	 * How long a hand-off waits for its waiter to register: far longer than the gap
	 * between an attempt's reply and the registration. A caller that never registers (it
	 * gave up, or got the lock by another attempt) left the queue and released what was
	 * handed to it ({@link LockBackend#leave}).
	 */
	private static final long UNCLAIMED_NANOS = TimeUnit.SECONDS.toNanos(30);

	/** At most this many unclaimed hand-offs are kept; the oldest go first. */
	private static final int MAX_UNCLAIMED = 4096;

	/**
	 * What a waiter hears; called under the waiters' monitor, possibly on the storage
	 * client's I/O thread, so it only hands the news over to the waiter's driver.
	 */
	interface Wake {

		/** A release may have freed the key. */
		void released();

		/** It became the head of its kind: it asks now. */
		void promoted();

		/** The storage handed the key to the owner token. */
		void handedOff(String owner, long fencingToken, long leaseMillis);

		/** The client closed. */
		void closed();

	}

	/** One caller waiting for one key. */
	final class Waiter {

		private final String key;

		/** The owner token it asks with. */
		private final String owner;

		/** Whether the lock is handed to it (it hears of that, not of releases). */
		private final boolean handOffs;

		private final Wake wake;

		/** Woken and not yet asked again: another wake-up is not needed. */
		private volatile boolean signalled;

		/** Whether a release of the key woke this waiter while it waited for it. */
		private volatile boolean woken;

		private Waiter(String key, String owner, boolean handOffs, Wake wake) {
			this.key = key;
			this.owner = owner;
			this.handOffs = handOffs;
			this.wake = wake;
		}

		String key() {
			return this.key;
		}

		/** It asks again now: the next release wakes it again. */
		void rearm() {
			this.signalled = false;
		}

		/** Whether it is the first waiter of its kind for its key. */
		boolean isHead() {
			synchronized (Waiters.this.waiting) {
				ArrayDeque<Waiter> queue = Waiters.this.waiting.get(this.key);
				return queue != null && headOf(queue, this.handOffs) == this;
			}
		}

		/** It is the head now: it takes over the re-checks, and asks at once. */
		private void promote() {
			this.signalled = true;
			this.wake.promoted();
		}

		private boolean signal() {
			if (this.signalled) {
				return false;
			}
			this.woken = true;
			this.signalled = true;
			this.wake.released();
			return true;
		}

	}

	/** The first waiter of the kind, or {@code null}. Under the monitor. */
	private static Waiter headOf(ArrayDeque<Waiter> queue, boolean handOffs) {
		for (Waiter waiter : queue) {
			if (waiter.handOffs == handOffs) {
				return waiter;
			}
		}
		return null;
	}

	/**
	 * Registers a waiter for the key and waits, at most the command timeout, until what
	 * wakes it flows. A waiter whose lock the backend hands off listens for the hand-offs
	 * to this client (its own channel, subscribed once); any other listens for the key's
	 * releases (its channel, subscribed while the key has local waiters and a while
	 * after). A hand-off to the owner that came before this registration is told to its
	 * wake at once.
	 * @param handOff whether the lock is handed off to the waiter (a one-key lock on a
	 * backend that {@link LockBackend#handsOff hands off})
	 */
	Waiter register(String key, String owner, boolean handOff, Wake wake) {
		Registration registration = registerAsync(key, owner, handOff, wake);
		this.backend.awaitListening(registration.listening());
		return registration.waiter();
	}

	/**
	 * Registers a waiter for the key, like {@link #register} but without waiting for the
	 * subscription: {@code listening} completes when notifications of the key flow.
	 * Readies the notification channel first, which may block up to the command timeout.
	 */
	Registration registerAsync(String key, String owner, boolean handOff, Wake wake) {
		// outside the monitor: connecting may take up to the command timeout
		this.backend.prepareListening();
		Waiter waiter = new Waiter(key, owner, handOff, wake);
		CompletableFuture<?> listening;
		synchronized (this.waiting) {
			listening = enqueue(waiter, handOff);
			claim(waiter);
		}
		return new Registration(waiter, (listening != null) ? listening : CompletableFuture.completedFuture(null));
	}

	/**
	 * A waiter and its subscription.
	 *
	 * @param waiter the waiter
	 * @param listening completes when notifications of the key flow
	 */
	record Registration(Waiter waiter, CompletableFuture<?> listening) {
	}

	/**
	 * Adds the waiter to its key's local queue and starts listening for what wakes it.
	 * Under the monitor, so that listen and unlisten keep their order (sent, not
	 * awaited).
	 * @return completes when notifications flow, or {@code null} when they do already
	 */
	private CompletableFuture<?> enqueue(Waiter waiter, boolean handOff) {
		String key = waiter.key;
		CompletableFuture<?> listening = null;
		if (handOff) {
			listening = this.backend.listenForHandOffs(key);
		}
		else if (this.listened.add(key)) {
			listening = this.backend.listen(key);
		}
		else {
			this.lingering.remove(key);
		}
		this.waiting.computeIfAbsent(key, (k) -> new ArrayDeque<>()).addLast(waiter);
		return listening;
	}

	/**
	 * The waiter leaves. The next waiter of its kind becomes the head when it was; and
	 * when it leaves the key without the lock after a release woke it (it timed out,
	 * failed, or waits for another key of its lock now), a wake-up goes to the next
	 * waiter not yet woken: the key may be free. A spare wake-up costs one attempt.
	 */
	void unregister(Waiter waiter, boolean acquired) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(waiter.key);
			if (queue == null) {
				return;
			}
			boolean wasHead = headOf(queue, waiter.handOffs) == waiter;
			if (!queue.remove(waiter)) {
				return;
			}
			if (queue.isEmpty()) {
				this.waiting.remove(waiter.key);
				if (this.listened.contains(waiter.key)) {
					linger(waiter.key);
				}
				return;
			}
			Waiter next = wasHead ? headOf(queue, waiter.handOffs) : null;
			if (next != null) {
				next.promote();
			}
			if (!acquired && waiter.woken) {
				signalFirst(queue, false);
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
			this.listened.remove(entry.getKey());
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
		// without the monitor: a caller that races a new waiter only asks once more
		return !this.waiting.containsKey(key) && this.asking.add(key);
	}

	void endAsking(String key) {
		this.asking.remove(key);
	}

	/**
	 * The storage handed a lock to a queued owner: told to the wake of the waiter that
	 * asks with that owner token. Told on the notification connection's thread, for every
	 * hand-off to this client, so it only wakes the waiter that asks with that owner
	 * token, if any. A waiter that gives up without the lock leaves the queue and
	 * releases what was handed to it ({@link LockBackend#leave}), so no hand-off is left
	 * held by nobody. A hand-off that finds no waiter is kept a while for one that
	 * registers after queueing ({@link #register} claims it).
	 */
	void handedOff(String key, String owner, long fencingToken, long leaseMillis) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				for (Waiter waiter : queue) {
					if (waiter.owner.equals(owner)) {
						waiter.wake.handedOff(owner, fencingToken, leaseMillis);
						return;
					}
				}
			}
			long now = System.nanoTime();
			Iterator<Unclaimed> oldest = this.unclaimed.values().iterator();
			while (oldest.hasNext()) {
				Unclaimed next = oldest.next();
				if (this.unclaimed.size() < MAX_UNCLAIMED && now - next.receivedNanos() < UNCLAIMED_NANOS) {
					break;
				}
				oldest.remove();
			}
			this.unclaimed.put(owner, new Unclaimed(key, fencingToken, leaseMillis, now));
		}
	}

	/**
	 * A hand-off that came before the waiter registered is its own. Under the monitor.
	 */
	private void claim(Waiter waiter) {
		if (this.unclaimed.isEmpty()) {
			return;
		}
		Unclaimed handOff = this.unclaimed.get(waiter.owner);
		if (handOff != null && handOff.key().equals(waiter.key)) {
			this.unclaimed.remove(waiter.owner);
			waiter.wake.handedOff(waiter.owner, handOff.fencingToken(), handOff.leaseMillis());
		}
	}

	/**
	 * The key was released: wake its longest-waiting local waiter not yet woken. Waiters
	 * of a lock that is handed off are not woken where notifications work: a release by
	 * this client handed the lock to the first live waiter queued in storage, which hears
	 * of it by the hand-off message (one asking again meanwhile would only cost a round
	 * trip), or freed it with nobody queued, which each head's periodic re-check finds.
	 */
	void released(String key) {
		boolean handOffsHeard = this.backend.notifies();
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				signalFirst(queue, handOffsHeard);
			}
		}
	}

	/**
	 * Signals the longest-waiting waiter not yet woken, passing over those a hand-off
	 * tells when {@code exceptHandOffWaiters}.
	 */
	private static void signalFirst(ArrayDeque<Waiter> queue, boolean exceptHandOffWaiters) {
		for (Waiter waiter : queue) {
			if (!(exceptHandOffWaiters && waiter.handOffs) && waiter.signal()) {
				return;
			}
		}
	}

	/** The local waiters of the key now. */
	int waitersOf(String key) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			return (queue != null) ? queue.size() : 0;
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
			this.listened.clear();
			this.unclaimed.clear();
			this.waiting.values().forEach((queue) -> queue.forEach((waiter) -> waiter.wake.closed()));
		}
	}

}
