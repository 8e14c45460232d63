package io.lockstep;

import java.util.OptionalLong;

import io.lockstep.internal.CallContext;

/**
 * Access to the locks held by the current call.
 */
public final class DistributedLocks {

	private DistributedLocks() {
	}

	/**
	 * The fencing token of the innermost lock held by the current call (an annotated
	 * method or a {@link LockTemplate} callback on this thread), or empty when none is
	 * held.
	 */
	public static OptionalLong currentFencingToken() {
		return CallContext.currentFencingToken();
	}

}
