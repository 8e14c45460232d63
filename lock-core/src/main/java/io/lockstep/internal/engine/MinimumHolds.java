package io.lockstep.internal.engine;

import java.time.Duration;

import io.lockstep.LockHandle;

/**
 * Moves the minimum hold of a held lock (see {@code LockTemplate.withMinHoldTime}) after
 * it was acquired, for ShedLock's
 * {@code SimpleLock.extend(lockAtMostFor, lockAtLeastFor)} whose {@code lockAtLeastFor}
 * counts from the extension.
 */
public final class MinimumHolds {

	private MinimumHolds() {
	}

	/**
	 * Makes the handle's keys, when it is closed, stay taken until {@code minHold} from
	 * now, never past the max-hold cap; {@link Duration#ZERO}: released at once. Replaces
	 * the minimum hold the lock had; does nothing for a handle that is not Lockstep's
	 * engine's.
	 */
	public static void holdFromNow(LockHandle handle, Duration minHold) {
		if (handle instanceof LeaseHandle lease) {
			long end = System.nanoTime() + minHold.toNanos();
			lease.parts().forEach((part) -> part.holdAtLeastUntil(end));
		}
	}

}
