package io.lockstep.internal.engine;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * stays subscribed a while ({@link WaitPolicy.LocalKeeping#linger}, 5 s) after its last
 * local waiter left ({@link Subscriptions}), so that steady contention costs no SUBSCRIBE
 * per wait. A hand-off that comes before its waiter registered is kept a while for it
 * ({@link UnclaimedHandOffs}).
 *
 * <p>
 * Where the store {@link LockStore#handsToSuccessors hands a lock to a successor}, a
 * hand-off waiter that becomes the head when the waiter before it acquired is promoted
 * behind that holder ({@link Listener#promotedBehind}): it does not ask, and the holder's
 * release names it as its {@link #successor}, so that the storage hands it the lock when
 * no one is queued for it there, and the release's reply tells it ({@link Naming}). A
 * release that did not hand it the lock promotes it then: it asks.
 *
 * <p>
 * Everything a waiter hears goes to its {@link Listener}, called under this object's
 * monitor, possibly on the storage client's I/O thread: a listener only hands the news
 * over.
 *
 * <p>
 * Over 300 lines for a reason: one monitor, one invariant. The queues, the keys listened
 * to (and lingering), and the hand-offs not yet claimed change together under one monitor
 * (a key is listened to while it has a queue or lingers; a hand-off is either told to the
 * waiter that asks with its owner token or kept for it), so they are nested parts of one
 * class, not classes that share a monitor handed to them.
 */
final class LocalQueues {

	private static final Logger logger = LoggerFactory.getLogger(LocalQueues.class);

	private final WakeUps wakeUps;

	/** The keys listened to; under the monitor. */
	private final Subscriptions subscriptions;

	/** Hand-offs no waiter claimed yet; under the monitor. */
	private final UnclaimedHandOffs unclaimed;

	/**
	 * The local waiters of each key; changed under its own monitor (the monitor of this
	 * class's every part), read without.
	 */
	private final Map<String, KeyQueue> waiting = new ConcurrentHashMap<>();

	/** Keys that a caller asks for now ({@link #beginAsking}). */
	private final Set<String> asking = ConcurrentHashMap.newKeySet();

	/** Whether a head promoted behind a holder of this client waits for its release. */
	private final boolean namesSuccessors;

	/**
	 * @param scheduler runs the task that stops listening to keys that lingered long
	 * enough
	 * @param keeping how long keys linger and unclaimed hand-offs are kept
	 */
	LocalQueues(WakeUps wakeUps, ScheduledExecutorService scheduler, WaitPolicy.LocalKeeping keeping) {
		this(wakeUps, scheduler, keeping, false);
	}

	/**
	 * @param namesSuccessors whether releases may name a successor (the store
	 * {@link LockStore#handsToSuccessors hands locks to successors})
	 */
	LocalQueues(WakeUps wakeUps, ScheduledExecutorService scheduler, WaitPolicy.LocalKeeping keeping,
			boolean namesSuccessors) {
		this.namesSuccessors = namesSuccessors;
		this.wakeUps = wakeUps;
		this.subscriptions = new Subscriptions(scheduler, keeping.linger().toNanos());
		this.unclaimed = new UnclaimedHandOffs(keeping.unclaimedHandOff().toNanos());
		wakeUps.onRelease(this::released);
	}

	/**
	 * Whether the waiter is the first of its kind for its key (asked under the monitor:
	 * the queue may change); a waiter for a share of the key (a reader, a permit holder)
	 * is always one: several may be admitted at once, each queued in storage.
	 */
	boolean isHead(Waiter waiter) {
		synchronized (this.waiting) {
			KeyQueue queue = this.waiting.get(waiter.key());
			return queue != null && (waiter.shared() || headOf(queue, waiter.handOffs()) == waiter);
		}
	}

	/** The first waiter of the kind, or {@code null}. Under the monitor. */
	private static Waiter headOf(KeyQueue queue, boolean handOffs) {
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
	 * listener at once.
	 * @param handOff whether the lock is handed off to the waiter (a one-key lock on a
	 * store that {@link LockStore#handsOff hands off})
	 */
	Waiter register(String key, String owner, boolean handOff, Listener listener) {
		Registration registration = registerAsync(key, owner, handOff, listener);
		this.wakeUps.await(registration.listening());
		return registration.waiter();
	}

	/**
	 * Registers a waiter for the key, like {@link #register} but without waiting for the
	 * subscription: {@code listening} completes when notifications of the key flow.
	 * Readies the notification channel first, which may block up to the command timeout.
	 */
	Registration registerAsync(String key, String owner, boolean handOff, Listener listener) {
		// outside the monitor: connecting may take up to the command timeout
		this.wakeUps.prepare();
		Waiter waiter = new Waiter(key, owner, handOff, listener);
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
			listening = this.subscriptions.listen(key);
		}
		this.waiting.computeIfAbsent(key, (k) -> new KeyQueue()).add(waiter);
		return listening;
	}

	/**
	 * The waiter leaves. The next waiter of its kind becomes the head when it was (behind
	 * this waiter, when it acquired and releases may name successors); and when it leaves
	 * the key without the lock after a release woke it (it timed out, failed, or waits
	 * for another key of its lock now), a wake-up goes to the next waiter not yet woken:
	 * the key may be free. A spare wake-up costs one attempt.
	 * @return whether it leaves without the lock after a release of this client handed
	 * the lock to it ({@link Naming}): then it gives the lock back
	 */
	boolean unregister(Waiter waiter, boolean acquired) {
		synchronized (this.waiting) {
			KeyQueue queue = this.waiting.get(waiter.key());
			if (queue == null) {
				return false;
			}
			boolean wasHead = headOf(queue, waiter.handOffs()) == waiter;
			if (!queue.remove(waiter)) {
				return false;
			}
			boolean giveBack = !acquired && waiter.handedHere;
			if (queue.isEmpty()) {
				this.waiting.remove(waiter.key());
				this.subscriptions.linger(waiter.key());
				return giveBack;
			}
			Waiter next = wasHead ? headOf(queue, waiter.handOffs()) : null;
			if (next != null) {
				if (acquired && waiter.handOffs() && this.namesSuccessors && waiter.listener().namesSuccessor()
						&& next.listener().successorLease() > 0) {
					next.promoteBehind();
				}
				else {
					next.promote();
				}
			}
			if (!acquired && waiter.woken()) {
				signalFirst(queue, false);
			}
			return giveBack;
		}
	}

	/**
	 * The successor a release of this client may hand a one-key lock to: the key's first
	 * hand-off waiter when it was promoted behind a holder of this client, not named
	 * since, and its lock can be handed so ({@link Listener#successorLease}).
	 * @param sentNanos before the release is sent: a lease handed by it counts from then
	 * @param giveBack gives back a lock handed to a successor that left meanwhile
	 * @return the naming, or {@code null} for none
	 */
	@Nullable Naming successor(String key, long sentNanos, Consumer<LockStore.Successor> giveBack) {
		// read without the monitor first: a release with no local waiter names no one
		if (!this.namesSuccessors || !this.waiting.containsKey(key)) {
			return null;
		}
		synchronized (this.waiting) {
			Waiter head = behindHead(key);
			return (head != null) ? new Naming(head, head.listener().successorLease(), sentNanos, giveBack) : null;
		}
	}

	/**
	 * A holder of the key left without naming a successor (its lease was lost, leaked,
	 * kept until its minimum hold passes, or never made): a head promoted behind it asks
	 * now.
	 */
	void holderLeft(String key) {
		if (!this.namesSuccessors || !this.waiting.containsKey(key)) {
			return;
		}
		synchronized (this.waiting) {
			Waiter head = behindHead(key);
			if (head != null) {
				head.promote();
			}
		}
	}

	/**
	 * The key's first hand-off waiter when it waits behind a holder of this client (no
	 * longer, once returned: it is named or asks), or {@code null}; only a waiter that
	 * can be named is promoted behind. Under the monitor.
	 */
	private @Nullable Waiter behindHead(String key) {
		KeyQueue queue = this.waiting.get(key);
		Waiter head = (queue != null) ? headOf(queue, true) : null;
		if (head == null || !head.behind) {
			return null;
		}
		head.behind = false;
		return head;
	}

	/**
	 * A release's naming of a successor, resolved once: the storage handed the lock to it
	 * (told to its listener, or given back when it left meanwhile), or it did not (the
	 * successor, still the head, asks now).
	 */
	final class Naming {

		private final Waiter waiter;

		private final long sentNanos;

		private final Consumer<LockStore.Successor> giveBack;

		private final LockStore.Successor successor;

		/** Under the queues' monitor. */
		private boolean resolved;

		private Naming(Waiter waiter, long leaseMillis, long sentNanos, Consumer<LockStore.Successor> giveBack) {
			this.waiter = waiter;
			this.sentNanos = sentNanos;
			this.giveBack = giveBack;
			this.successor = new LockStore.Successor(waiter.owner(), leaseMillis, this::handed);
		}

		/** What the release names. */
		LockStore.Successor successor() {
			return this.successor;
		}

		/** The storage handed the lock to it; on the thread that read the reply. */
		private void handed(long fencingToken) {
			resolve(fencingToken, true);
		}

		/**
		 * The release did not hand it the lock: unless it was handed, the successor asks
		 * now if it is still the head.
		 */
		void notHanded() {
			resolve(-1, false);
		}

		/**
		 * The release failed or was not answered in time: it may have handed the lock.
		 * Unless told, the successor asks now if it is still the head, and gives back
		 * what it may have been handed when it leaves without the lock (at once if it
		 * left already): a leave is token-checked, so one too many is harmless.
		 */
		void failed() {
			resolve(-1, true);
		}

		/**
		 * Resolves the naming once: a successor still waiting is told the hand-off (a
		 * fencing token of 0 or more), or else asks if it is the head; one that left is
		 * given back what it was or may have been handed.
		 */
		private void resolve(long fencingToken, boolean mayBeHanded) {
			boolean left;
			synchronized (LocalQueues.this.waiting) {
				if (this.resolved) {
					return;
				}
				this.resolved = true;
				KeyQueue queue = LocalQueues.this.waiting.get(this.waiter.key());
				left = queue == null || !queue.contains(this.waiter);
				if (!left) {
					this.waiter.handedHere |= mayBeHanded;
					if (fencingToken >= 0) {
						this.waiter.listener()
							.handedOffHere(this.waiter.owner(), fencingToken, this.successor.leaseMillis(),
									this.sentNanos);
					}
					else if (headOf(queue, true) == this.waiter) {
						this.waiter.promote();
					}
				}
			}
			if (left && mayBeHanded) {
				this.giveBack.accept(this.successor);
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
	 * The storage handed a lock to a queued owner: told to the listener of the waiter
	 * that asks with that owner token. Told on the notification connection's thread, for
	 * every hand-off to this client, so it only wakes the waiter that asks with that
	 * owner token, if any. A waiter that gives up without the lock leaves the queue and
	 * releases what was handed to it ({@link LockStore.Release#leave}), so no hand-off is
	 * left held by nobody. A hand-off that finds no waiter is kept a while for one that
	 * registers after queueing ({@link #register} claims it).
	 */
	void handedOff(String key, String owner, long fencingToken, long leaseMillis) {
		synchronized (this.waiting) {
			KeyQueue queue = this.waiting.get(key);
			if (queue != null) {
				for (Waiter waiter : queue) {
					if (waiter.owner().equals(owner)) {
						waiter.listener().handedOff(owner, fencingToken, leaseMillis);
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
			waiter.listener().handedOff(waiter.owner(), handOff.fencingToken(), handOff.leaseMillis());
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
		// read without the monitor, as if the monitor were taken at the moment of the
		// read: the map and the count change only under it, once per locked section, and
		// a queue is removed only when empty, so one replaced since the map was read
		// counts 0 for good; a release that can wake no one leaves the monitor to the
		// waiters taking their turn
		KeyQueue queue = this.waiting.get(key);
		boolean handOffsHeard = this.wakeUps.notifies();
		if (queue == null || handOffsHeard && !queue.wokenByReleases()) {
			return;
		}
		synchronized (this.waiting) {
			queue = this.waiting.get(key);
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
	private static void signalFirst(KeyQueue queue, boolean exceptHandOffWaiters) {
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
			KeyQueue queue = this.waiting.get(key);
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
			this.subscriptions.close();
			this.unclaimed.clear();
			this.waiting.values().forEach((queue) -> queue.forEach((waiter) -> waiter.listener().closed()));
		}
	}

	/**
	 * What a waiter hears; called under the queues' monitor, possibly on the storage
	 * client's I/O thread, so it only hands the news over to the waiter's driver.
	 */
	interface Listener {

		/** A release may have freed the key. */
		void released();

		/** It became the head of its kind: it asks now. */
		void promoted();

		/**
		 * It became the head of the hand-off waiters behind a holder of this client,
		 * whose release may hand it the lock: it takes over the re-checks, and does not
		 * ask now.
		 */
		default void promotedBehind() {
			promoted();
		}

		/**
		 * The hand-off lease a release may hand it the lock for, as a
		 * {@link LockStore.Successor}; 0 when its lock cannot be handed so.
		 */
		default long successorLease() {
			return 0;
		}

		/**
		 * Whether its release, once it holds the lock, names a successor (a one-key
		 * exclusive lock): only then does the next waiter wait behind it.
		 */
		default boolean namesSuccessor() {
			return false;
		}

		/**
		 * A release of this client handed the lock to the owner token, named as its
		 * successor; the release was sent at {@code sentNanos}.
		 */
		default void handedOffHere(String owner, long fencingToken, long leaseMillis, long sentNanos) {
		}

		/** The storage handed the key to the owner token. */
		void handedOff(String owner, long fencingToken, long leaseMillis);

		/** The client closed. */
		void closed();

		/**
		 * Whether the waiter asks for a share of the key (a read lock or a semaphore's
		 * permit): a release may admit several such waiters at once, so it wakes every
		 * one of them that waits in line before the next exclusive waiter.
		 */
		default boolean shared() {
			return false;
		}

	}

	/**
	 * A key's local waiters in arrival order, changed under the queues' monitor, and
	 * whether a release may wake any of them while hand-offs are heard, read without it.
	 * Its iterator cannot remove: only {@link #remove} keeps the count.
	 */
	private static final class KeyQueue implements Iterable<Waiter> {

		private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

		/**
		 * How many of them are not told by a hand-off (a release may wake those); written
		 * under the monitor.
		 */
		private volatile int toldByReleases;

		void add(Waiter waiter) {
			this.waiters.addLast(waiter);
			if (!waiter.handOffs()) {
				this.toldByReleases++;
			}
		}

		boolean remove(Waiter waiter) {
			boolean removed = this.waiters.remove(waiter);
			if (removed && !waiter.handOffs()) {
				this.toldByReleases--;
			}
			return removed;
		}

		/**
		 * Whether a release may wake any of them while hand-offs are heard
		 * ({@code false}: none).
		 */
		boolean wokenByReleases() {
			return this.toldByReleases > 0;
		}

		boolean isEmpty() {
			return this.waiters.isEmpty();
		}

		boolean contains(Waiter waiter) {
			return this.waiters.contains(waiter);
		}

		int size() {
			return this.waiters.size();
		}

		@Override
		public Iterator<Waiter> iterator() {
			return Collections.unmodifiableCollection(this.waiters).iterator();
		}

	}

	/**
	 * A waiter and its subscription, as {@link #registerAsync} returns them.
	 *
	 * @param waiter the waiter
	 * @param listening completes when notifications of the key flow
	 */
	record Registration(Waiter waiter, CompletableFuture<?> listening) {
	}

	/**
	 * One caller waiting for one key, in its key's local queue.
	 */
	static final class Waiter {

		private final String key;

		/** The owner token it asks with. */
		private final String owner;

		/** Whether the lock is handed to it (it hears of that, not of releases). */
		private final boolean handOffs;

		private final Listener listener;

		/** Woken and not yet asked again: another wake-up is not needed. */
		private volatile boolean signalled;

		/** Whether a release of the key woke this waiter while it waited for it. */
		private volatile boolean woken;

		/**
		 * Promoted behind a holder of this client and not named since; under the queues'
		 * monitor.
		 */
		private boolean behind;

		/** A release of this client handed the lock to it; under the queues' monitor. */
		private boolean handedHere;

		private Waiter(String key, String owner, boolean handOffs, Listener listener) {
			this.key = key;
			this.owner = owner;
			this.handOffs = handOffs;
			this.listener = listener;
		}

		String key() {
			return this.key;
		}

		/** It asks again now: the next release wakes it again. */
		void rearm() {
			this.signalled = false;
		}

		/** The owner token it asks with. */
		String owner() {
			return this.owner;
		}

		boolean handOffs() {
			return this.handOffs;
		}

		Listener listener() {
			return this.listener;
		}

		/** Whether it asks for a share of the key (see {@link Listener#shared()}). */
		boolean shared() {
			return this.listener.shared();
		}

		/** Whether a release of the key woke it while it waited for it. */
		boolean woken() {
			return this.woken;
		}

		/**
		 * It is the head now, behind a holder of this client: it takes over the
		 * re-checks, and the holder's release may name it.
		 */
		private void promoteBehind() {
			this.behind = true;
			this.listener.promotedBehind();
		}

		/** It is the head now: it takes over the re-checks, and asks at once. */
		private void promote() {
			this.signalled = true;
			this.listener.promoted();
		}

		private boolean signal() {
			if (this.signalled) {
				return false;
			}
			this.woken = true;
			this.signalled = true;
			this.listener.released();
			return true;
		}

	}

	/**
	 * The keys whose release notifications the queues listen to: a key is listened to
	 * while it has local waiters and lingers a while after its last one left (its waiters
	 * may come back soon), at most {@value #MAX_LINGERING} lingering keys. Used under the
	 * queues' monitor, which the scheduled sweep takes too.
	 */
	private final class Subscriptions {

		/** At most this many keys stay subscribed without local waiters. */
		private static final int MAX_LINGERING = 1024;

		private final ScheduledExecutorService scheduler;

		private final long lingerNanos;

		/** Keys whose release channel is subscribed (waited for, or lingering). */
		private final Set<String> listened = new HashSet<>();

		/**
		 * Keys subscribed without local waiters, by when their last waiter left; in
		 * order.
		 */
		private final Map<String, Long> lingering = new LinkedHashMap<>();

		private boolean sweepScheduled;

		private volatile boolean closed;

		Subscriptions(ScheduledExecutorService scheduler, long lingerNanos) {
			this.scheduler = scheduler;
			this.lingerNanos = lingerNanos;
		}

		/**
		 * Listens to the key's releases (sent, not awaited).
		 * @return completes when notifications flow, or {@code null} when they do already
		 */
		CompletableFuture<?> listen(String key) {
			if (this.listened.add(key)) {
				return LocalQueues.this.wakeUps.listen(key);
			}
			this.lingering.remove(key);
			return null;
		}

		/** The key's last waiter left: keeps it subscribed for a while, if it is. */
		void linger(String key) {
			if (this.listened.contains(key)) {
				this.lingering.put(key, System.nanoTime());
				sweep();
			}
		}

		/**
		 * Stops listening to the keys that lingered long enough, or the longest lingering
		 * beyond {@value #MAX_LINGERING}; schedules the next sweep while keys linger.
		 */
		private void sweep() {
			long now = System.nanoTime();
			Iterator<Map.Entry<String, Long>> oldest = this.lingering.entrySet().iterator();
			while (oldest.hasNext()) {
				Map.Entry<String, Long> entry = oldest.next();
				if (this.lingering.size() <= MAX_LINGERING && now - entry.getValue() < this.lingerNanos) {
					break;
				}
				oldest.remove();
				this.listened.remove(entry.getKey());
				LocalQueues.this.wakeUps.unlisten(entry.getKey());
			}
			if (!this.lingering.isEmpty() && !this.sweepScheduled && !this.closed) {
				long due = this.lingering.values().iterator().next() + this.lingerNanos - now;
				try {
					this.scheduler.schedule(this::scheduledSweep, Math.max(due, 0) + 1_000_000L, TimeUnit.NANOSECONDS);
					this.sweepScheduled = true;
				}
				catch (RejectedExecutionException ex) {
					// shutting down: closing the wake-up channel ends every subscription
				}
			}
		}

		private void scheduledSweep() {
			try {
				synchronized (LocalQueues.this.waiting) {
					this.sweepScheduled = false;
					sweep();
				}
			}
			catch (Throwable ex) {
				logger.warn("Stopping to listen to released keys failed; retrying later", ex);
			}
		}

		void close() {
			this.closed = true;
			this.lingering.clear();
			this.listened.clear();
		}

	}

	/**
	 * Hand-offs to owner tokens no local waiter asks with (yet): a caller that queued
	 * with its first attempt registers after the reply, and the hand-off may come first.
	 * Kept by arrival, oldest first, a while and up to a bound. Used under the queues'
	 * monitor only.
	 */
	private static final class UnclaimedHandOffs {

		/**
		 * How long a hand-off waits for its waiter to register
		 * ({@link WaitPolicy.LocalKeeping#unclaimedHandOff}). A caller that never
		 * registers (it gave up, or got the lock by another attempt) left the queue and
		 * released what was handed to it ({@link LockStore.Release#leave}).
		 */
		private final long unclaimedNanos;

		/** At most this many unclaimed hand-offs are kept; the oldest go first. */
		private static final int MAX_UNCLAIMED = 4096;

		private final Map<String, HandOff> byOwner = new LinkedHashMap<>();

		UnclaimedHandOffs(long unclaimedNanos) {
			this.unclaimedNanos = unclaimedNanos;
		}

		/** A hand-off that found no waiter, and when it came. */
		private record HandOff(String key, long fencingToken, long leaseMillis, long receivedNanos) {
		}

		/** Keeps a hand-off for a waiter that registers later; forgets the stale ones. */
		void keep(String key, String owner, long fencingToken, long leaseMillis) {
			long now = System.nanoTime();
			Iterator<HandOff> oldest = this.byOwner.values().iterator();
			while (oldest.hasNext()) {
				HandOff next = oldest.next();
				if (this.byOwner.size() < MAX_UNCLAIMED && now - next.receivedNanos() < this.unclaimedNanos) {
					break;
				}
				oldest.remove();
			}
			this.byOwner.put(owner, new HandOff(key, fencingToken, leaseMillis, now));
		}

		/** The hand-off of the key to the owner, taken, or {@code null}. */
		HandOff claim(String key, String owner) {
			HandOff handOff = this.byOwner.get(owner);
			if (handOff == null || !handOff.key().equals(key)) {
				return null;
			}
			this.byOwner.remove(owner);
			return handOff;
		}

		void clear() {
			this.byOwner.clear();
		}

	}

}
