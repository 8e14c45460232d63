package io.lockstep;

/**
 * Work to run while a lock is held; see
 * {@link LockTemplate#execute(String, LockCallback)}.
 *
 * @param <T> the result type
 */
@FunctionalInterface
public interface LockCallback<T> {

	/**
	 * Runs with the lock held.
	 * @param lock the held lock; its {@link LockHandle#fencingToken()} can guard writes
	 * @return the result, returned by the template
	 */
	T doInLock(LockHandle lock);

}
