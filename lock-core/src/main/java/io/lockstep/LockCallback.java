package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * Work to run while a lock is held; see
 * {@link LockTemplate#execute(String, LockCallback)}.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LockCallback<T extends @Nullable Object> {

	/**
	 * Runs with the lock held.
	 * @param lock the held lock; its {@link LockHandle#fencingToken()} can guard writes
	 * @return the result, returned by the template (may be {@code null})
	 */
	T doInLock(LockHandle lock);

}
