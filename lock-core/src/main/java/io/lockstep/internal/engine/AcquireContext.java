package io.lockstep.internal.engine;

import java.util.function.Supplier;

/**
 * What an engine's acquisitions work with, below them: the storage's two halves, the
 * local waiters, the observations, the lease registry a grant goes to, the releases a
 * handle goes through, and the engine's threads.
 *
 * @param store where the locks are
 * @param wakeUps how waiters hear of releases and hand-offs
 * @param waiters the local waiters
 * @param observations acquisitions' observations
 * @param leases where a grant becomes a lease
 * @param releases what a handle releases through
 * @param threads the asynchronous acquisitions' threads (created on first use; fails once
 * the engine is closed)
 * @param maxHoldNanos the hard cap on every hold, or {@code Long.MAX_VALUE}
 */
record AcquireContext(LockStore store, WakeUps wakeUps, LocalQueues waiters, LockObservations observations,
		Leases leases, Releases releases, Supplier<AsyncThreads> threads, long maxHoldNanos) {
}
