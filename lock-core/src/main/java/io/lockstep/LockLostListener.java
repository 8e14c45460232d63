package io.lockstep;

/**
 * Told when the lease of a held lock is lost. Called on the library's own
 * {@code lockstep-events} thread, one event after another: it may call the lock API, but
 * a slow listener delays the next events.
 */
@FunctionalInterface
public interface LockLostListener {

	void onLockLost(LockLostEvent event);

}
