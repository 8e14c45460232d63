/**
 * The lock engine, whatever the storage: the lease state machine ({@code Lease}), the
 * storage seam ({@code LockStore}, {@code WakeUps}), handles and reentrancy, the
 * watchdog, the waiters and the loss events; not API.
 */
package io.lockstep.internal.engine;
