package io.lockstep.internal.engine;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The local queues of the callers waiting for a lock, per key, in arrival order, and the
 * delivery of what wakes them. The wake-up channel delivers release notifications (Redis
 * pub/sub, or in-process for the JVM-local store) for the keys that have local waiters; a
 * release wakes the longest-waiting local waiter of the key, and a woken waiter that
 * leaves the key without the lock passes a wake-up on to the next. Notifications are
 * hints: a woken waiter runs the atomic acquire again ({@link Acquisition} decides when).
 *
 * <p>
 * A key's waiters are of two kinds: those whose lock the store {@link LockStore#handsOff
 * hands off} (a one-key lock) and the others (a multi-key lock, or no hand-off). The
 * first waiter of each kind is its head: only the head asks the storage while the others
 * wait for a release or their promotion, so that one kind never holds up the other. A
 * hand-off head is queued in storage under its owner token; a release hands it the lock
 * and the hand-off message, on a channel of the client's own subscribed once for its
 * life, reaches it ({@link #handedOff}) without a further round trip. Such waiters are
 * not woken by releases where notifications work (the lock went to the queue's first live
 * waiter, which hears of it). Waiters of other locks listen on the key's channel, which
 * stays subscribed for {@value Listening#LINGER_SECONDS} s after its last local waiter
 * left, so that steady contention costs no SUBSCRIBE per wait.
 *
 * <p>
 * Everything a waiter hears goes to its {@link Wake}, called under this object's monitor,
 * possibly on the storage client's I/O thread: a wake only hands the news over.
 */
final class Waiters {

	private final WakeUps wakeUps;

	/** The keys listened to; under the monitor. */
	private final Listening listening;

	/** Hand-offs no waiter claimed yet; under the monitor. */
	private final UnclaimedHandOffs unclaimed = new UnclaimedHandOffs();

	/** The local waiters of each key; changed under its own monitor, read without. */
	private final Map<String, ArrayDeque<Waiter>> waiting = new ConcurrentHashMap<>();

	/** Keys that a caller asks for now ({@link #beginAsking}). */
	private final Set<String> asking = ConcurrentHashMap.newKeySet();

	/**
	 * @param scheduler runs the task that stops listening to keys that lingered long
	 * enough
	 */
	Waiters(WakeUps wakeUps, ScheduledExecutorService scheduler) {
		this.wakeUps = wakeUps;
		this.listening = new Listening(wakeUps, scheduler, this.waiting);
		wakeUps.onRelease(this::released);
	}

	/**
	 * Whether the waiter is the first of its kind for its key (asked under the monitor:
	 * the queue may change); a waiter for a share of the key (a reader, a permit holder)
	 * is always one: several may be admitted at once, each queued in storage.
	 */
	boolean isHead(Waiter waiter) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(waiter.key());
			return queue != null && (waiter.shared() || headOf(queue, waiter.handOffs()) == waiter);
		}
	}

	/** The first waiter of the kind, or {@code null}. Under the monitor. */
	private static Waiter headOf(ArrayDeque<Waiter> queue, boolean handOffs) {
		for (Waiter waiter : queue) {
			if (waiter.handOffs() == handOffs) {
				return waiter;
			}
		}
		return null;
	}

	/**
	 * Registers a waiter for the key and waits, at most the command timeout, until what
	 * wakes it flows. A waiter whose lock the store hands off listens for the hand-offs
	 * to this client (its own channel, subscribed once); any other listens for the key's
	 * releases (its channel, subscribed while the key has local waiters and a while
	 * after). A hand-off to the owner that came before this registration is told to its
	 * wake at once.
	 * @param handOff whether the lock is handed off to the waiter (a one-key lock on a
	 * store that {@link LockStore#handsOff hands off})
	 */
	Waiter register(String key, String owner, boolean handOff, Wake wake) {
		Registration registration = registerAsync(key, owner, handOff, wake);
		this.wakeUps.await(registration.listening());
		return registration.waiter();
	}

	/**
	 * Registers a waiter for the key, like {@link #register} but without waiting for the
	 * subscription: {@code listening} completes when notifications of the key flow.
	 * Readies the notification channel first, which may block up to the command timeout.
	 */
	Registration registerAsync(String key, String owner, boolean handOff, Wake wake) {
		// outside the monitor: connecting may take up to the command timeout
		this.wakeUps.prepare();
		Waiter waiter = new Waiter(key, owner, handOff, wake);
		CompletableFuture<?> listening;
		synchronized (this.waiting) {
			listening = enqueue(waiter, handOff);
			claim(waiter);
		}
		return new Registration(waiter, (listening != null) ? listening : CompletableFuture.completedFuture(null));
	}

	/**
	 * Adds the waiter to its key's local queue and starts listening for what wakes it.
	 * Under the monitor, so that listen and unlisten keep their order (sent, not
	 * awaited).
	 * @return completes when notifications flow, or {@code null} when they do already
	 */
	private CompletableFuture<?> enqueue(Waiter waiter, boolean handOff) {
		String key = waiter.key();
		CompletableFuture<?> listening = null;
		if (handOff) {
			listening = this.wakeUps.listenForHandOffs(key);
		}
		else {
			listening = this.listening.listen(key);
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
			ArrayDeque<Waiter> queue = this.waiting.get(waiter.key());
			if (queue == null) {
				return;
			}
			boolean wasHead = headOf(queue, waiter.handOffs()) == waiter;
			if (!queue.remove(waiter)) {
				return;
			}
			if (queue.isEmpty()) {
				this.waiting.remove(waiter.key());
				this.listening.linger(waiter.key());
				return;
			}
			Waiter next = wasHead ? headOf(queue, waiter.handOffs()) : null;
			if (next != null) {
				next.promote();
			}
			if (!acquired && waiter.woken()) {
				signalFirst(queue, false);
			}
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
	 * releases what was handed to it ({@link LockStore.Release#leave}), so no hand-off is
	 * left held by nobody. A hand-off that finds no waiter is kept a while for one that
	 * registers after queueing ({@link #register} claims it).
	 */
	void handedOff(String key, String owner, long fencingToken, long leaseMillis) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				for (Waiter waiter : queue) {
					if (waiter.owner().equals(owner)) {
						waiter.wake().handedOff(owner, fencingToken, leaseMillis);
						return;
					}
				}
			}
			this.unclaimed.keep(key, owner, fencingToken, leaseMillis);
		}
	}

	/**
	 * A hand-off that came before the waiter registered is its own. Under the monitor.
	 */
	private void claim(Waiter waiter) {
		UnclaimedHandOffs.HandOff handOff = this.unclaimed.claim(waiter.key(), waiter.owner());
		if (handOff != null) {
			waiter.wake().handedOff(waiter.owner(), handOff.fencingToken(), handOff.leaseMillis());
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
		boolean handOffsHeard = this.wakeUps.notifies();
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				signalFirst(queue, handOffsHeard);
			}
		}
	}

	/**
	 * Signals the longest-waiting waiter not yet woken, passing over those a hand-off
	 * tells when {@code exceptHandOffWaiters}; when it asks for a share of the key (a
	 * reader, a permit holder), every waiter for a share in line before the next
	 * exclusive one: the release may admit all of them.
	 */
	private static void signalFirst(ArrayDeque<Waiter> queue, boolean exceptHandOffWaiters) {
		boolean shares = false;
		for (Waiter waiter : queue) {
			if (exceptHandOffWaiters && waiter.handOffs()) {
				continue;
			}
			if (shares && !waiter.shared()) {
				return;
			}
			shares = waiter.shared();
			if (waiter.signal() && !shares) {
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
		synchronized (this.waiting) {
			this.listening.close();
			this.unclaimed.clear();
			this.waiting.values().forEach((queue) -> queue.forEach((waiter) -> waiter.wake().closed()));
		}
	}

}
