package io.lockstep;

import java.util.List;
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

	/**
	 * The keys of the locks held by the current call (annotated methods and
	 * {@link LockTemplate} callbacks on this thread), outermost first, as the lock names
	 * them: {@code <name>:<key>} for {@code @DistributedLock(name = ...)} or
	 * {@link LockTemplate#named(String)}, else the key; without the key prefix. Empty
	 * when none is held. The locks of {@code Mono}/{@code Flux} methods, taken on
	 * subscription, are not listed (see
	 * {@link ReactiveLockTemplate#currentFencingToken()}).
	 */
	public static List<String> currentLockKeys() {
		return CallContext.currentKeys();
	}

}
