package io.lockstep.local;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockLostListener;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.LockTemplateBuilder;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.LockSettings;
import io.lockstep.internal.engine.Storage;
import io.lockstep.internal.engine.TemplateOptions;
import io.lockstep.observation.LockObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LockTemplate} whose locks exist only in this JVM: the same API and semantics
 * (waiting, leases and the watchdog, reentrancy, fencing tokens from a local counter,
 * lease-loss events) without Redis. Locks do <em>not</em> exclude other processes: use it
 * where there is one instance, in tests, or with {@code lockstep.enabled=false}.
 */
public final class LocalLockTemplate implements LockTemplate, LockMonitor, AutoCloseable {

	private final EngineTemplate locks;

	/** The store of the engine, shared with the copies. */
	private final LocalStore store;

	static {
		EngineTemplate.register(LocalLockTemplate.class, (template) -> template.locks);
	}

	LocalLockTemplate(LocalStore store, EngineTemplate locks) {
		this.store = store;
		this.locks = locks;
	}

	@Override
	public <R> R execute(String key, LockCallback<R> callback) {
		return this.locks.execute(key, callback);
	}

	@Override
	public <R> R executeAll(Collection<String> keys, LockCallback<R> callback) {
		return this.locks.executeAll(keys, callback);
	}

	@Override
	public <R> Optional<R> tryExecute(String key, LockCallback<R> callback) {
		return this.locks.tryExecute(key, callback);
	}

	@Override
	public LockHandle acquire(String key) {
		return this.locks.acquire(key);
	}

	@Override
	public LockHandle acquireAll(Collection<String> keys) {
		return this.locks.acquireAll(keys);
	}

	@Override
	public Optional<LockHandle> tryAcquire(String key) {
		return this.locks.tryAcquire(key);
	}

	@Override
	public Lock asLock(String key) {
		return this.locks.asLock(key);
	}

	@Override
	public boolean isLocked(String key) {
		return this.locks.isLocked(key);
	}

	@Override
	public LocalLockTemplate withWaitTime(Duration waitTime) {
		return new LocalLockTemplate(this.store, this.locks.withWaitTime(waitTime));
	}

	@Override
	public LocalLockTemplate withLeaseTime(Duration leaseTime) {
		return new LocalLockTemplate(this.store, this.locks.withLeaseTime(leaseTime));
	}

	@Override
	public LocalLockTemplate withMinHoldTime(Duration minHoldTime) {
		return new LocalLockTemplate(this.store, this.locks.withMinHoldTime(minHoldTime));
	}

	@Override
	public LocalLockTemplate named(String name) {
		return new LocalLockTemplate(this.store, this.locks.named(name));
	}

	@Override
	public LocalLockTemplate withLockName(String lockName) {
		return new LocalLockTemplate(this.store, this.locks.withLockName(lockName));
	}

	@Override
	public LocalLockTemplate read() {
		return new LocalLockTemplate(this.store, this.locks.read());
	}

	@Override
	public LocalLockTemplate write() {
		return new LocalLockTemplate(this.store, this.locks.write());
	}

	@Override
	public LocalLockTemplate withPermits(int permits) {
		return new LocalLockTemplate(this.store, this.locks.withPermits(permits));
	}

	@Override
	public List<LockInfo> heldLocks() {
		return this.locks.heldLocks();
	}

	@Override
	public String keyPrefix() {
		return this.locks.keyPrefix();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The key is resolved like {@link #isLocked(String)}: with this copy's name.
	 */
	@Override
	public Optional<Duration> leaseRemaining(String key) {
		return this.locks.leaseRemaining(key);
	}

	@Override
	public Duration ping() {
		return this.locks.ping();
	}

	@Override
	public long leasesLost() {
		return this.locks.leasesLost();
	}

	@Override
	public long releaseFailures() {
		return this.locks.releaseFailures();
	}

	@Override
	public boolean renewalsFailing() {
		return this.locks.renewalsFailing();
	}

	@Override
	public String lastRenewalFailure() {
		return this.locks.lastRenewalFailure();
	}

	@Override
	public boolean isDistributed() {
		return this.locks.isDistributed();
	}

	/**
	 * Closes what the template opened when this is the instance a builder returned: held
	 * leases stop being renewed and expire on their own. Does nothing on a copy.
	 */
	@Override
	public void close() {
		this.locks.close();
	}

	/** A builder of a JVM-local template. */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Forgets every lock of this template and of its copies, whoever holds it, as if
	 * every lease had expired; fencing tokens keep increasing. Meant for tests, between
	 * tests: a holder still running finds its lease lost at its next renewal or release
	 * ({@link io.lockstep.LockLostException}).
	 * @return how many keys were held
	 */
	public int clear() {
		return this.store.clear();
	}

	/** Builds a {@link LocalLockTemplate}. */
	public static final class Builder implements LockTemplateBuilder<Builder, LocalLockTemplate> {

		private final TemplateOptions options = new TemplateOptions();

		private Builder() {
		}

		@Override
		public Builder keyPrefix(String keyPrefix) {
			this.options.keyPrefix(keyPrefix);
			return this;
		}

		@Override
		public Builder waitTime(Duration waitTime) {
			this.options.waitTime(waitTime);
			return this;
		}

		@Override
		public Builder leaseTime(Duration leaseTime) {
			this.options.leaseTime(leaseTime);
			return this;
		}

		@Override
		public Builder maxHoldTime(@Nullable Duration maxHoldTime) {
			this.options.maxHoldTime(maxHoldTime);
			return this;
		}

		@Override
		public Builder interruptOnLeaseLost(boolean interrupt) {
			this.options.interruptOnLeaseLost(interrupt);
			return this;
		}

		@Override
		public Builder virtualThreads(boolean virtual) {
			this.options.virtualThreads(virtual);
			return this;
		}

		@Override
		public Builder lockLostListener(LockLostListener listener) {
			this.options.lockLostListener(listener);
			return this;
		}

		@Override
		public Builder lockOverride(String name, @Nullable Duration waitTime, @Nullable Duration leaseTime) {
			this.options.lockOverride(name, waitTime, leaseTime);
			return this;
		}

		@Override
		public Builder lockDelay(Duration lockDelay) {
			this.options.lockDelay(lockDelay);
			return this;
		}

		@Override
		public Builder lockDelay(String name, Duration lockDelay) {
			this.options.lockDelay(name, lockDelay);
			return this;
		}

		@Override
		public Builder lockOverride(String name, @Nullable Duration waitTime, @Nullable Duration leaseTime,
				@Nullable Duration minHoldTime) {
			this.options.lockOverride(name, waitTime, leaseTime, minHoldTime);
			return this;
		}

		@Override
		public Builder observationRegistry(ObservationRegistry registry,
				@Nullable LockObservationConvention convention) {
			this.options.observationRegistry(registry, convention);
			return this;
		}

		@Override
		public LocalLockTemplate build() {
			LockSettings settings = this.options.settings();
			LocalWakeUps wakeUps = new LocalWakeUps();
			LocalStore store = new LocalStore(wakeUps::released);
			return new LocalLockTemplate(store,
					new EngineTemplate(this.options.engine(new Storage(store, wakeUps)), settings, true));
		}

	}

}
