package io.lockstep.test.support;

import java.util.List;
import java.util.OptionalLong;

/**
 * A call of a {@code @DistributedLock} method through its Spring bean, recorded by
 * {@link TestLocks} as the method started, inside its lock.
 *
 * @param method {@code SimpleClassName.method}, as the {@code lock} tag of Lockstep's
 * metrics names an annotated method
 * @param lockKeys the keys of the locks the call held as the method started, outermost
 * first, as the locks name them ({@code <name>:<key>}, without the key prefix); empty
 * when it ran without a lock (e.g. another advice ordered outside the lock's)
 * @param fencingToken the fencing token of the innermost lock, or empty
 * @param thread the name of the thread that ran the method
 */
public record LockedCall(String method, List<String> lockKeys, OptionalLong fencingToken, String thread) {

	public LockedCall {
		lockKeys = List.copyOf(lockKeys);
	}

	/** Whether the call held the lock of {@code key}. */
	public boolean ranUnderLock(String key) {
		return this.lockKeys.contains(key);
	}

	@Override
	public String toString() {
		return this.method + " under " + LockAssert.describe(this.lockKeys);
	}

}
