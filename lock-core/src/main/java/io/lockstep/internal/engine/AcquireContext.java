package io.lockstep.internal.engine;

import java.util.function.Supplier;

/**
 * What an engine's acquisitions work with, below them: the storage, the engine's options
 * (its max-hold cap, observations and timings), and the parts the engine built once: the
 * local waiters, the lease registry a grant goes to, the releases a handle goes through,
 * and the engine's threads.
 *
 * @param storage where the locks are, and how waiters hear of releases and hand-offs
 * @param options the engine's options
 * @param waiters the local waiters
 * @param leases where a grant becomes a lease
 * @param releases what a handle releases through
 * @param threads the asynchronous acquisitions' threads (created on first use; fails once
 * the engine is closed)
 */
record AcquireContext(Storage storage, EngineOptions options, LocalQueues waiters, LeaseRegistry leases,
		Releaser releases, Supplier<AsyncThreads> threads) {

	LockStore store() {
		return this.storage.store();
	}

	WakeUps wakeUps() {
		return this.storage.wakeUps();
	}

	LockObservations observations() {
		return this.options.observations();
	}

	WaitPolicy waits() {
		return this.options.waits();
	}

	/** The hard cap on every hold, or {@code Long.MAX_VALUE}. */
	long maxHoldNanos() {
		return (this.options.maxHoldTime() != null) ? this.options.maxHoldTime().toNanos() : Long.MAX_VALUE;
	}

}
