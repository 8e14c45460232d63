package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockInfo;
import io.lockstep.internal.CallContext;

/**
 * The lock engine over one {@link Storage}: acquisitions (the {@link Acquisition}
 * machine, run by a {@link BlockingAcquirer} or an {@link AsyncAcquirer}), per-key
 * reentrancy through the {@link CallContext}, and the read-only views of its leases. It
 * wires the parts below it once, at construction: the lease registry
 * ({@link LeaseRegistry}, with the watchdog), the {@link Releaser} its handles end
 * through, the local {@link LocalQueues}, the loss events. One engine per template bean;
 * its copies share it, and only the bean closes it.
 */
public final class LockEngine implements AutoCloseable {

	/** Reserved key (after the prefix) that {@link #ping()} reads; never written. */
	private static final String PING_KEY = "__ping";

	private final Storage storage;

	private final String keyPrefix;

	private final Duration maxHoldTime;

	private final LockObservations observations;

	private final LeaseEvents events;

	private final LeaseRegistry leases;

	private final LocalQueues waiters;

	private final Releaser releases;

	private final AcquireContext context;

	private final boolean virtualThreads;

	private final WaitPolicy waits;

	/** The threads of {@link #acquireAsync}; created on first use. */
	private AsyncThreads asyncThreads;

	private boolean closed;

	LockEngine(Storage storage, EngineOptions options) {
		OwnerTokens.seed();
		this.storage = storage;
		this.keyPrefix = options.keyPrefix();
		this.maxHoldTime = options.maxHoldTime();
		this.virtualThreads = options.virtualThreads();
		this.waits = options.waits();
		this.observations = options.observations();
		this.events = new LeaseEvents(options.onLoss().listeners(), options.onLoss().interrupt(), this.observations,
				this.virtualThreads);
		this.leases = new LeaseRegistry(storage.store(), this.observations, this.events);
		this.waiters = new LocalQueues(storage.wakeUps(), this.leases.watchdog().executor(), options.waits().local(),
				storage.store().handsOff() && storage.store().handsToSuccessors());
		storage.wakeUps().onHandOff(this.waiters::handedOff);
		this.releases = new Releaser(storage.store(), this.waiters, this.events, options, this::asyncThreads,
				this.leases.watchdog());
		this.context = new AcquireContext(storage, options, this.waiters, this.leases, this.releases,
				this::asyncThreads);
	}

	/**
	 * Acquires the lock for the current call, waiting up to the request's wait. Keys the
	 * call holds already are re-entered; only the others are acquired.
	 * @return the handle, or {@code null} when not acquired and the request
	 * {@link LockRequest#skips skips} (observed as {@code skipped}, not {@code timeout})
	 * @throws LockAcquisitionException when the wait ran out and the request does not
	 * skip
	 */
	LeaseHandle acquire(LockRequest request) {
		LockId id = request.id();
		Map<String, Lease> held = heldByThisCall();
		if (held.isEmpty()) {
			// the call holds none of it yet (the usual case)
			return acquired(request, List.of());
		}
		Set<Lease> parts = new LinkedHashSet<>();
		boolean missing = false;
		for (String key : id.keys()) {
			Lease lease = held.get(key);
			if (lease != null) {
				lease.id().sharing().checkReentry(id.sharing(), key);
				parts.add(lease);
			}
			else {
				missing = true;
			}
		}
		if (!missing) {
			return new LeaseHandle(this.releases, id, new ArrayList<>(parts));
		}
		return acquired(request, new ArrayList<>(parts));
	}

	/** Acquires the keys of the request the call does not hold ({@code held}). */
	private LeaseHandle acquired(LockRequest request, List<Lease> held) {
		long start = System.nanoTime();
		LeaseHandle acquired = new BlockingAcquirer(this.context, request, held).acquire();
		if (acquired == null && !request.skips()) {
			throw new LockAcquisitionException(request.id().display(), Duration.ofNanos(System.nanoTime() - start));
		}
		return acquired;
	}

	/**
	 * A handle on every key of {@code id} for a subscription that holds some of them in
	 * {@code outer} and acquired the others in {@code acquired}: the outer's leases of
	 * those keys, entered once more, and the acquired ones, whose own handle passes its
	 * entry on (closing it releases nothing). Bound to no thread, like
	 * {@link #acquireAsync}; closing it leaves the outer's leases held.
	 */
	LeaseHandle widened(LockId id, LeaseHandle outer, LeaseHandle acquired) {
		List<Lease> parts = new ArrayList<>();
		for (Lease lease : outer.parts()) {
			if (lease.id().keys().stream().anyMatch(id.keys()::contains)) {
				parts.add(lease);
			}
		}
		parts.addAll(acquired.parts());
		LeaseHandle widened = new LeaseHandle(this.releases, id, parts, false);
		acquired.close();
		return widened;
	}

	/**
	 * Acquires the lock without blocking the caller and without a thread of its own while
	 * it waits (see {@link AsyncAcquirer}); no reentrancy (no call context). The handle
	 * is not bound to any thread: it is renewed until closed, never interrupts, and tells
	 * a lost lease through {@link LeaseHandle#onLoss}.
	 * @return completes, on one of the engine's threads, with the handle, with
	 * {@code null} when the wait elapsed while another owner held the lock, or
	 * exceptionally with a {@link io.lockstep.LockException}; cancelling it stops the
	 * waiting, and a grant that races with the cancellation is released
	 */
	CompletableFuture<LeaseHandle> acquireAsync(LockRequest request) {
		return new AsyncAcquirer(this.context, request).start();
	}

	/** The leases the current call holds, by key. */
	private Map<String, Lease> heldByThisCall() {
		List<CallContext.Entry> entries = CallContext.held(this.releases);
		if (entries.isEmpty()) {
			return Map.of();
		}
		Map<String, Lease> held = new LinkedHashMap<>();
		for (CallContext.Entry entry : entries) {
			for (Lease lease : ((LeaseHandle) entry).parts()) {
				// never re-enter a lease that ran out by the local clock, even before the
				// watchdog marks it lost
				if (lease.state() == Lease.State.HELD && lease.isHeld()) {
					lease.id().keys().forEach((key) -> held.putIfAbsent(key, lease));
				}
			}
		}
		return held;
	}

	/** Whether a handle is one of this engine's (its identity for reentrancy). */
	boolean owns(LeaseHandle handle) {
		return handle.scope() == this.releases;
	}

	/**
	 * The threads of {@link #acquireAsync} and of asynchronous releases.
	 * @throws io.lockstep.LockException once the engine is closed
	 */
	synchronized AsyncThreads asyncThreads() {
		if (this.closed) {
			throw new LockException("The lock client is closed");
		}
		if (this.asyncThreads == null) {
			this.asyncThreads = new AsyncThreads(this.virtualThreads);
		}
		return this.asyncThreads;
	}

	// --- read-only views
	// -------------------------------------------------------------------

	/** The leases held now, oldest first. */
	public List<LockInfo> heldLocks() {
		return this.leases.held();
	}

	/** Leases in the registry (held or being released). */
	public int registered() {
		return this.leases.registered();
	}

	public String keyPrefix() {
		return this.keyPrefix;
	}

	/** The hard cap on every hold, or {@code null}. */
	public Duration maxHoldTime() {
		return this.maxHoldTime;
	}

	public LockStore store() {
		return this.storage.store();
	}

	public WakeUps wakeUps() {
		return this.storage.wakeUps();
	}

	public boolean isDistributed() {
		return this.storage.store().isDistributed();
	}

	/**
	 * Asks the store one cheap question ({@link LockStore#ping}, about the reserved key
	 * {@code <key-prefix>__ping}): one round trip, bounded like every blocking operation
	 * of the store.
	 * @return how long the answer took
	 * @throws LockException when the storage does not answer in time or refuses locks or
	 * refuses locks
	 */
	public Duration ping() {
		long start = System.nanoTime();
		this.storage.store().ping(this.keyPrefix + PING_KEY);
		return Duration.ofNanos(System.nanoTime() - start);
	}

	public long leasesLost() {
		return this.events.lostCount();
	}

	public long releaseFailures() {
		return this.events.releaseFailures();
	}

	public boolean renewalsFailing() {
		return this.leases.watchdog().renewalsFailing();
	}

	public String lastRenewalFailure() {
		return this.leases.watchdog().lastFailure();
	}

	public int mostRenewalCallsInAPass() {
		return this.leases.watchdog().mostCallsInAPass();
	}

	public int keysWaitedFor() {
		return this.waiters.keysWaitedFor();
	}

	/** The callers of this process waiting for the (full) key now. */
	public int waitersOf(String key) {
		return this.waiters.waitersOf(key);
	}

	LocalQueues waiters() {
		return this.waiters;
	}

	/** The wait and hand-off timings of its acquisitions. */
	WaitPolicy waits() {
		return this.waits;
	}

	/** Stops renewing (held leases expire on their own) and closes the storage. */
	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
			if (this.asyncThreads != null) {
				this.asyncThreads.close();
			}
		}
		this.leases.close();
		this.waiters.close();
		this.events.close();
		this.storage.close();
	}

}
