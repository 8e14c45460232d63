package io.lockstep.local;

import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.AbstractLockTemplate;
import io.lockstep.internal.engine.AbstractLockTemplateBuilder;
import io.lockstep.internal.engine.LockEngine;
import io.lockstep.internal.engine.LockSettings;

/**
 * A {@link LockTemplate} whose locks exist only in this JVM: the same API and semantics
 * (waiting, leases and the watchdog, reentrancy, fencing tokens from a local counter,
 * lease-loss events) without Redis. Locks do <em>not</em> exclude other processes: use it
 * where there is one instance, in tests, or with {@code lockstep.enabled=false}.
 */
public final class LocalLockTemplate extends AbstractLockTemplate<LocalLockTemplate> {

	private final LocalBackend backend;

	LocalLockTemplate(LockEngine engine, LockSettings settings, boolean owner) {
		super(engine, settings, owner);
		this.backend = (LocalBackend) engine.backend();
	}

	/** A builder of a JVM-local template. */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	protected LocalLockTemplate copy(LockEngine engine, LockSettings settings) {
		return new LocalLockTemplate(engine, settings, false);
	}

	@Override
	public boolean isDistributed() {
		return false;
	}

	/**
	 * Forgets every lock of this template and of its copies, whoever holds it, as if
	 * every lease had expired; fencing tokens keep increasing. Meant for tests, between
	 * tests: a holder still running finds its lease lost at its next renewal or release
	 * ({@link io.lockstep.LockLostException}).
	 * @return how many keys were held
	 */
	public int clear() {
		return this.backend.clear();
	}

	/** Builds a {@link LocalLockTemplate}. */
	public static final class Builder extends AbstractLockTemplateBuilder<Builder, LocalLockTemplate> {

		private Builder() {
		}

		@Override
		protected Builder self() {
			return this;
		}

		@Override
		public LocalLockTemplate build() {
			LockSettings settings = settings();
			return new LocalLockTemplate(engine(new LocalBackend()), settings, true);
		}

	}

}
