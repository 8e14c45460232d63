package io.lockstep.internal.engine;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockInfo;
import io.lockstep.LockLostException;
import io.lockstep.LockLostListener;
import io.lockstep.internal.CallContext;
import io.lockstep.observation.LockObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock engine over one {@link LockBackend}: the acquire loop (one atomic attempt,
 * then park until a hand-off, a release notification or the holder's lease runs out; only
 * the head of a key's local waiters asks the storage), per-key reentrancy through the
 * {@link CallContext}, releases, and the reactions to every {@link Lease} transition (the
 * registry of held leases, observations, loss events). One engine per template bean; its
 * copies share it, and only the bean closes it.
 */
public final class LockEngine implements Lease.Transitions, AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LockEngine.class);

	private static final SecureRandom random = secureRandom();

	private static final HexFormat hex = HexFormat.of();

	/** Reserved key (after the prefix) that {@link #ping()} reads; never written. */
	private static final String PING_KEY = "__ping";

	/**
	 * The longest lease a hand-off grants a waiter whose lease is renewed (a watchdog
	 * lease): its watchdog extends it once it has the lock, and a waiter that vanished
	 * after it queued holds the lock up no longer than this.
	 */
	public static final long HAND_OFF_GRANT_MILLIS = 5000;

	private final LockBackend backend;

	private final String keyPrefix;

	private final Duration maxHoldTime;

	private final long maxHoldNanos;

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final LockObservations observations;

	private final LeaseEvents events;

	private final Waiters waiters;

	private final Watchdog watchdog;

	/** The threads of {@link #acquireAsync}; created on first use. */
	private AsyncThreads asyncThreads;

	private final boolean virtualThreads;

	private boolean closed;

	/**
	 * @param maxHoldTime the hard cap on every hold, or {@code null}
	 * @param observationRegistry may be {@code null} (no observations)
	 * @param convention may be {@code null} (the default convention)
	 * @param virtualThreads whether the asynchronous acquisitions' workers and the
	 * lock-lost listeners run on virtual threads (JDK 21+)
	 */
	public LockEngine(LockBackend backend, String keyPrefix, Duration maxHoldTime, List<LockLostListener> listeners,
			boolean interruptOnLoss, ObservationRegistry observationRegistry, LockObservationConvention convention,
			boolean virtualThreads) {
		this.virtualThreads = virtualThreads;
		this.backend = backend;
		this.keyPrefix = keyPrefix;
		this.maxHoldTime = maxHoldTime;
		this.maxHoldNanos = (maxHoldTime != null) ? maxHoldTime.toNanos() : Long.MAX_VALUE;
		this.observations = new LockObservations(observationRegistry, convention);
		this.events = new LeaseEvents(listeners, interruptOnLoss, this.observations, virtualThreads);
		this.watchdog = new Watchdog(backend, this.leases, this);
		this.waiters = new Waiters(backend, this.watchdog.executor());
		backend.onHandOff(this.waiters::handedOff);
	}

	/**
	 * Acquires the lock for the current call, waiting up to {@code waitNanos}. Keys the
	 * call holds already are re-entered; only the others are acquired.
	 * @param renewed whether the watchdog renews the lease (else it is fixed)
	 * @param minHoldNanos how long after acquisition the keys stay taken when released
	 * earlier, or 0
	 * @param throwOnTimeout whether a wait that ran out throws; else it returns
	 * {@code null}, for a caller that skips its work (observed as {@code skipped}, not
	 * {@code timeout})
	 * @return the handle, or {@code null} when not acquired and not
	 * {@code throwOnTimeout}
	 */
	LeaseHandle acquire(LockId id, String lockName, long waitNanos, long leaseNanos, boolean renewed, long minHoldNanos,
			boolean throwOnTimeout) {
		Map<String, Lease> held = heldByThisCall();
		Set<Lease> parts = new LinkedHashSet<>();
		List<String> missing = new ArrayList<>();
		for (String key : id.keys()) {
			Lease lease = held.get(key);
			if (lease != null) {
				parts.add(lease);
			}
			else {
				missing.add(key);
			}
		}
		if (!missing.isEmpty()) {
			long start = System.nanoTime();
			Lease acquired = acquireLease(LockId.of(missing), lockName, waitNanos, leaseNanos, renewed, minHoldNanos,
					!throwOnTimeout);
			if (acquired == null) {
				if (throwOnTimeout) {
					throw new LockAcquisitionException(id.display(), Duration.ofNanos(System.nanoTime() - start));
				}
				return null;
			}
			parts.add(acquired);
		}
		return new LeaseHandle(this, id, new ArrayList<>(parts));
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
	 * @param skips whether the caller skips its work when the wait runs out (observed as
	 * {@code skipped}, not {@code timeout})
	 */
	CompletableFuture<LeaseHandle> acquireAsync(LockId id, String lockName, long waitNanos, long leaseNanos,
			boolean renewed, long minHoldNanos, boolean skips) {
		return new AsyncAcquirer(this, id, lockName, waitNanos, leaseNanos, renewed, minHoldNanos, skips).start();
	}

	/** The leases the current call holds, by key. */
	private Map<String, Lease> heldByThisCall() {
		List<CallContext.Entry> entries = CallContext.held(this);
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

	private Lease acquireLease(LockId id, String lockName, long waitNanos, long leaseNanos, boolean renewed,
			long minHoldNanos, boolean skips) {
		return new BlockingAcquirer(this, id, lockName, waitNanos, leaseNanos, renewed, minHoldNanos, skips).acquire();
	}

	/** A new 128-bit random owner token. */
	static String newOwner() {
		return hex.formatHex(nextToken());
	}

	/** The lease an acquire asks for: the lease, capped by max-hold, in ms. */
	long grantedMillis(long leaseNanos) {
		return Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(leaseNanos, this.maxHoldNanos)));
	}

	/**
	 * The lease a hand-off grants a queued owner, in ms: its whole lease when that is
	 * fixed; at most {@link #HAND_OFF_GRANT_MILLIS} when its watchdog extends it (a
	 * {@link Lease} renews such a short first grant early).
	 */
	static long handOffMillis(long grantedMillis, boolean renewed) {
		return renewed ? Math.min(grantedMillis, HAND_OFF_GRANT_MILLIS) : grantedMillis;
	}

	/** The hard cap on every hold, in ns, or {@code Long.MAX_VALUE} for none. */
	long maxHoldNanos() {
		return this.maxHoldNanos;
	}

	/** The max-hold cap an acquire sends, in ms, or 0 for none. */
	long maxHoldMillis() {
		return (this.maxHoldNanos != Long.MAX_VALUE) ? TimeUnit.NANOSECONDS.toMillis(this.maxHoldNanos) : 0;
	}

	/**
	 * Creates and registers the lease of a grant; the watchdog takes it.
	 * @param sent when the grant's lease starts at the latest (the send time of the
	 * attempt it answers, or of one before it)
	 * @param capNanos the max-hold cap, or {@code Long.MAX_VALUE}
	 */
	Lease granted(LockId id, long[] fencingTokens, String owner, String lockName, long leaseNanos, boolean renewed,
			long minHoldNanos, long sent, long grantedNanos, long capNanos) {
		long cap = capNanos;
		Observation held = this.observations.startHeld(id.display(), lockName, fencingTokens[0]);
		Lease lease = new Lease(id, fencingTokens, owner, lockName, leaseNanos, renewed, minHoldNanos, sent,
				grantedNanos, cap, held, this, this.backend::driftNanos);
		this.leases.add(lease);
		this.watchdog.wake(lease);
		return lease;
	}

	/**
	 * A handle leaves its leases; each lease left by its last handle is released.
	 * @throws LockLostException if a lease released here was lost while held
	 */
	void exit(List<Lease> parts, LeaseHandle.CallFrame call) {
		LockLostException lost = null;
		for (Lease lease : parts) {
			if (lease.exit(call)) {
				LockLostException failure = release(lease);
				lost = (lost != null) ? lost : failure;
			}
		}
		if (lost != null) {
			throw lost;
		}
	}

	/**
	 * Releases a lease: the storage's compare-and-delete decides, or, before the lease's
	 * minimum hold has passed, the storage's compare-and-expire, which leaves the keys to
	 * expire when it passes (waiters are not told: the keys are still taken). Every key
	 * deleted or kept proves the lease was held until now (never a loss, whatever the
	 * local clock says); a key gone or owned by another owner is a loss. When the storage
	 * does not answer, a lease still valid by the local clock is left to expire (logged
	 * and counted, not the caller's failure); one that had run out is a loss.
	 * @return the loss to report, or {@code null}
	 */
	private LockLostException release(Lease lease) {
		long started = System.nanoTime();
		Lease.State prior = lease.beginRelease();
		if (prior == Lease.State.LOST) {
			// the key may still hold our token (lost by the local clock): free it for
			// others
			try {
				this.backend.release(lease.id(), lease.owner());
			}
			catch (LockException ex) {
				logger.debug("Releasing the lost lock '{}' failed; it expires on its own", lease.id().display(), ex);
			}
			return new LockLostException(lease.id().display(), lease.reason());
		}
		if (prior != Lease.State.HELD) {
			return null;
		}
		boolean ranOut = started - lease.deadlineNanos() >= 0;
		long keepMillis = lease.minHoldLeftMillis(started);
		int done;
		try {
			done = (keepMillis > 0) ? this.backend.keep(lease.id(), lease.owner(), keepMillis)
					: this.backend.release(lease.id(), lease.owner());
		}
		catch (LockException ex) {
			if (ranOut) {
				String reason = "the lease ran out by the local clock before release, and the release failed: "
						+ ex.getMessage();
				lease.endRelease(Lease.State.LOST, reason);
				return new LockLostException(lease.id().display(), reason);
			}
			this.events.releaseFailed(lease, ex);
			lease.endRelease(Lease.State.EXPIRING, "release failed: " + ex.getMessage());
			return null;
		}
		if (keepMillis <= 0 && done > 0) {
			lease.id().keys().forEach(this.waiters::released);
		}
		if (done == lease.id().size()) {
			if (keepMillis > 0) {
				lease.endRelease(Lease.State.EXPIRING, "kept until its minimum hold passes, in " + keepMillis + " ms");
			}
			else {
				lease.endRelease(Lease.State.RELEASED, null);
			}
			return null;
		}
		String reason = ranOut ? "the lease ran out by the local clock before release (at release a key was gone)"
				: "at release a key of the lock was gone or held by another owner";
		lease.endRelease(Lease.State.LOST, reason);
		return new LockLostException(lease.id().display(), reason);
	}

	/**
	 * Confirms in storage that every lease is still held; marks a lease lost and throws
	 * if not. Leases released normally pass.
	 */
	void verify(List<Lease> parts) {
		for (Lease lease : parts) {
			if (lease.state() == Lease.State.HELD) {
				int held = this.backend.check(lease.id(), lease.owner());
				if (held < lease.id().size()) {
					lease.lose("a key of the lock was gone or held by another owner when checked");
				}
				else if (System.nanoTime() - lease.deadlineNanos() >= 0) {
					lease.lose("the lease ran out by the local clock");
				}
			}
			Lease.State state = lease.state();
			if (state != Lease.State.HELD && state != Lease.State.RELEASED && state != Lease.State.EXPIRING) {
				throw new LockLostException(lease.id().display(),
						(lease.reason() != null) ? lease.reason() : "it is no longer held (" + state + ")");
			}
		}
	}

	/**
	 * Confirms every lease before the transaction the call runs in commits, like
	 * {@link #verify}; a check the storage did not answer (unreachable, failing) is
	 * counted ({@code precommit.failed}, on the held lock's observation) and named, and
	 * the transaction rolls back as for a lost lease.
	 * @throws LockLostException when a lease was lost
	 * @throws LockException when a lease could not be confirmed
	 */
	void verifyBeforeCommit(LockId id, List<Lease> parts) {
		for (Lease lease : parts) {
			try {
				verify(List.of(lease));
			}
			catch (LockLostException ex) {
				throw ex;
			}
			catch (LockException ex) {
				this.observations.precommitFailed(lease.observation());
				throw new LockException("Could not confirm the lock before commit ('" + id.display()
						+ "'), so the transaction rolls back: " + ex.getMessage(), ex);
			}
		}
	}

	/** The watchdog found the lease gone or run out. */
	void expired(Lease lease, String reason) {
		lease.lose(reason);
	}

	/** A handle became unreachable without {@code close()}. */
	void leaked(LockId id, List<Lease> parts, LeaseHandle.CallFrame call) {
		logger.warn("A LockHandle of '{}' became unreachable without close(); its lease is no longer renewed and "
				+ "expires on its own. Close every handle (try-with-resources).", id.display());
		for (Lease lease : parts) {
			if (lease.exit(call)) {
				lease.leak("its handle was dropped without close()");
			}
		}
	}

	@Override
	public void ended(Lease lease, Lease.State from, Lease.State to, String reason) {
		this.leases.remove(lease);
		this.observations.stopHeld(lease.observation());
		if (to == Lease.State.LOST) {
			lease.calls().forEach((call) -> call.lost(reason));
			this.events.lost(lease, reason);
		}
	}

	// --- read-only views
	// -------------------------------------------------------------------

	/** The leases held now, oldest first. */
	public List<LockInfo> heldLocks() {
		long now = System.nanoTime();
		return this.leases.stream()
			.filter((lease) -> lease.state() == Lease.State.HELD)
			.sorted(Comparator.comparing(Lease::acquiredAt))
			.map((lease) -> new LockInfo(lease.id().display(), lease.lockName(), lease.fencingToken(lease.id().first()),
					lease.acquiredAt(), Duration.ofNanos(Math.max(0, lease.deadlineNanos() - now)), lease.renewed(),
					lease.holderThread(), lease.depth()))
			.toList();
	}

	/** Leases in the registry (held or being released). */
	public int registered() {
		return this.leases.size();
	}

	public String keyPrefix() {
		return this.keyPrefix;
	}

	/** The hard cap on every hold, or {@code null}. */
	public Duration maxHoldTime() {
		return this.maxHoldTime;
	}

	public LockBackend backend() {
		return this.backend;
	}

	LockObservations observations() {
		return this.observations;
	}

	Waiters waiters() {
		return this.waiters;
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

	/**
	 * Asks the backend one cheap question ({@link LockBackend#ping}, about the reserved
	 * key {@code <key-prefix>__ping}): one round trip, bounded like every blocking
	 * operation of the backend.
	 * @return how long the answer took
	 * @throws LockException when the storage does not answer in time or refuses locks
	 */
	public Duration ping() {
		long start = System.nanoTime();
		this.backend.ping(this.keyPrefix + PING_KEY);
		return Duration.ofNanos(System.nanoTime() - start);
	}

	public long leasesLost() {
		return this.events.lostCount();
	}

	public long releaseFailures() {
		return this.events.releaseFailures();
	}

	public boolean renewalsFailing() {
		return this.watchdog.renewalsFailing();
	}

	public String lastRenewalFailure() {
		return this.watchdog.lastFailure();
	}

	public int mostRenewalCallsInAPass() {
		return this.watchdog.mostCallsInAPass();
	}

	public int keysWaitedFor() {
		return this.waiters.keysWaitedFor();
	}

	/** The callers of this process waiting for the (full) key now. */
	public int waitersOf(String key) {
		return this.waiters.waitersOf(key);
	}

	/**
	 * A DRBG (NIST SP 800-90A), seeded once, here: it never reads {@code /dev/urandom}
	 * again, so a token is made without I/O, also on a non-blocking (reactive) thread.
	 */
	private static SecureRandom secureRandom() {
		SecureRandom random;
		try {
			random = SecureRandom.getInstance("DRBG");
		}
		catch (NoSuchAlgorithmException ex) {
			random = new SecureRandom();
		}
		// seeds it now (a DRBG seeds on first use)
		random.nextBytes(new byte[16]);
		return random;
	}

	private static byte[] nextToken() {
		byte[] token = new byte[16];
		random.nextBytes(token);
		return token;
	}

	/** Stops renewing (held leases expire on their own) and closes the backend. */
	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
			if (this.asyncThreads != null) {
				this.asyncThreads.close();
			}
		}
		this.watchdog.close();
		for (Lease lease : List.copyOf(this.leases)) {
			lease.abandon("the lock client was closed");
		}
		this.waiters.close();
		this.events.close();
		this.backend.close();
	}

}
