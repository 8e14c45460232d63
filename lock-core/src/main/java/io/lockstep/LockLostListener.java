package io.lockstep;

/**
 * Told when the lease of a held lock is lost. Called on the watchdog thread (or the
 * releasing thread): return quickly and never block.
 */
@FunctionalInterface
public interface LockLostListener {

	void onLockLost(LockLostEvent event);

}
