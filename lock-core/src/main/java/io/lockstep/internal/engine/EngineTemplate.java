package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockMode;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.internal.transaction.LockRelease;

import org.springframework.util.Assert;

/**
 * The {@link LockTemplate} on a {@link LockEngine}, whatever its store, that each public
 * template ({@code RedisLockTemplate}, {@code LocalLockTemplate}) wraps. The instance a
 * builder returns owns the engine and {@link #close() closes} it; the copies from
 * {@link #withWaitTime}, {@link #withLeaseTime}, {@link #withMinHoldTime}, {@link #named}
 * and {@link #withLockName} are views that share it, and closing one does nothing.
 */
public final class EngineTemplate implements LockTemplate, LockMonitor, AutoCloseable {

	/** How to find the engine template inside each public template type. */
	private static final Map<Class<?>, Function<Object, EngineTemplate>> insides = new ConcurrentHashMap<>();

	private final LockEngine engine;

	private final LockSettings settings;

	private final boolean closesEngine;

	/**
	 * @param closesEngine whether this instance closes the engine (the one a builder
	 * returned)
	 */
	public EngineTemplate(LockEngine engine, LockSettings settings, boolean closesEngine) {
		this.engine = engine;
		this.settings = settings;
		this.closesEngine = closesEngine;
	}

	/**
	 * Tells how to find the engine template inside a public template type (called once,
	 * when that type is initialized).
	 */
	public static <T> void register(Class<T> type, Function<T, EngineTemplate> inside) {
		insides.put(type, (template) -> inside.apply(type.cast(template)));
	}

	/**
	 * The engine template inside a template of Lockstep's, or {@code null} for any other
	 * {@link LockTemplate}.
	 */
	public static EngineTemplate of(Object template) {
		Function<Object, EngineTemplate> inside = (template != null) ? insides.get(template.getClass()) : null;
		return (inside != null) ? inside.apply(template) : null;
	}

	/** A view with other settings on the same engine. */
	private EngineTemplate copy(LockSettings settings) {
		return new EngineTemplate(this.engine, settings, false);
	}

	@Override
	public <R> R execute(String key, LockCallback<R> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		return run(acquire(key), callback);
	}

	@Override
	public <R> R executeAll(Collection<String> keys, LockCallback<R> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		return run(acquireAll(keys), callback);
	}

	@Override
	public <R> Optional<R> tryExecute(String key, LockCallback<R> callback) {
		Assert.notNull(callback, "'callback' must not be null");
		return tryAcquire(key).map((lock) -> run(lock, callback));
	}

	/**
	 * Runs the callback and releases the lock after it, or, inside a Spring transaction,
	 * after that transaction completes (confirming the lock before it commits).
	 */
	private <R> R run(LockHandle lock, LockCallback<R> callback) {
		LockRelease release = LockRelease.bind(lock);
		Throwable failure = null;
		try {
			return callback.doInLock(lock);
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			release.arrive(failure);
		}
	}

	@Override
	public LockHandle acquire(String key) {
		return acquire(this.settings.lockId(key), this.settings.waitNanos(), true);
	}

	@Override
	public LockHandle acquireAll(Collection<String> keys) {
		return acquire(this.settings.lockId(keys), this.settings.waitNanos(), true);
	}

	@Override
	public Optional<LockHandle> tryAcquire(String key) {
		return Optional.ofNullable(acquire(this.settings.lockId(key), 0, false));
	}

	/**
	 * Acquires the keys (one or several, all or nothing) for a caller that skips its work
	 * when another owner holds the lock ({@code onLocked = SKIP}): waits up to this
	 * copy's wait time, then returns {@code null} instead of throwing, and the
	 * acquisition is observed as {@code skipped}, not {@code timeout}.
	 * @return the handle, or {@code null} when not acquired within the wait time
	 */
	public LockHandle acquireOrSkip(List<String> keys) {
		LockId id = (keys.size() == 1) ? this.settings.lockId(keys.get(0)) : this.settings.lockId(keys);
		return acquire(id, this.settings.waitNanos(), false);
	}

	private LockHandle acquire(LockId id, long waitNanos, boolean throwOnTimeout) {
		return this.engine.acquire(this.settings.request(id, waitNanos, !throwOnTimeout));
	}

	/** The lease of this copy's locks: its fixed lease, or the watchdog's lease. */
	public Duration leaseTime() {
		return this.settings.leaseTime();
	}

	@Override
	public Lock asLock(String key) {
		this.settings.lockId(key);
		return new ThreadOwnedLock(this, key);
	}

	@Override
	public boolean isLocked(String key) {
		return this.engine.store().remainingLease(this.settings.redisKey(key)) >= 0;
	}

	@Override
	public EngineTemplate withWaitTime(Duration waitTime) {
		return copy(this.settings.withWaitTime(waitTime));
	}

	@Override
	public EngineTemplate withLeaseTime(Duration leaseTime) {
		return copy(this.settings.withLeaseTime(leaseTime));
	}

	@Override
	public EngineTemplate withMinHoldTime(Duration minHoldTime) {
		return copy(this.settings.withMinHoldTime(minHoldTime, this.engine.maxHoldTime()));
	}

	@Override
	public EngineTemplate named(String name) {
		return copy(this.settings.named(name));
	}

	@Override
	public EngineTemplate withLockName(String lockName) {
		return copy(this.settings.withLockName(lockName));
	}

	@Override
	public EngineTemplate read() {
		return shared(LockMode.READ, this.settings.sharing().permits(), "read()");
	}

	@Override
	public EngineTemplate write() {
		return shared(LockMode.WRITE, this.settings.sharing().permits(), "write()");
	}

	@Override
	public EngineTemplate withPermits(int permits) {
		return shared(this.settings.sharing().mode(), permits, "withPermits(" + permits + ")");
	}

	private EngineTemplate shared(LockMode mode, int permits, String view) {
		return copy(sharedSettings(this.engine, this.settings, mode, permits, view));
	}

	/**
	 * The settings of a read, write or semaphore view.
	 * @throws IllegalArgumentException for a read lock with permits, or permits below 1
	 * @throws UnsupportedOperationException for a read lock or semaphore on a store that
	 * cannot share keys (Redlock)
	 */
	static LockSettings sharedSettings(LockEngine engine, LockSettings settings, LockMode mode, int permits,
			String view) {
		LockSettings shared = settings.withSharing(mode, permits, view);
		if (!shared.sharing().exclusive() && !engine.store().shares()) {
			throw new UnsupportedOperationException(view + ": " + shared.sharing().describe()
					+ " is not supported by this lock store (Redlock supports exclusive locks only)");
		}
		return shared;
	}

	// --- LockMonitor
	// --------------------------------------------------------------------

	@Override
	public List<LockInfo> heldLocks() {
		return this.engine.heldLocks();
	}

	@Override
	public String keyPrefix() {
		return this.engine.keyPrefix();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The key is resolved like {@link #isLocked(String)}: with this copy's name.
	 */
	@Override
	public Optional<Duration> leaseRemaining(String key) {
		long millis = this.engine.store().remainingLease(this.settings.redisKey(key));
		return (millis >= 0) ? Optional.of(Duration.ofMillis(millis)) : Optional.empty();
	}

	@Override
	public Duration ping() {
		return this.engine.ping();
	}

	@Override
	public long leasesLost() {
		return this.engine.leasesLost();
	}

	@Override
	public long releaseFailures() {
		return this.engine.releaseFailures();
	}

	@Override
	public boolean renewalsFailing() {
		return this.engine.renewalsFailing();
	}

	@Override
	public String lastRenewalFailure() {
		return this.engine.lastRenewalFailure();
	}

	@Override
	public boolean isDistributed() {
		return this.engine.isDistributed();
	}

	/** The settings of this copy. */
	LockSettings settings() {
		return this.settings;
	}

	/** The engine shared by this template and its copies. */
	public LockEngine engine() {
		return this.engine;
	}

	/**
	 * Closes the engine when this is the instance a builder returned: held leases stop
	 * being renewed and expire on their own. Does nothing on a copy.
	 */
	@Override
	public void close() {
		if (this.closesEngine) {
			this.engine.close();
		}
	}

}
