package io.lockstep;

/**
 * What a {@link DistributedLock} method does when its lock was not acquired within the
 * wait time.
 */
public enum OnLocked {

	/** Throw {@link LockAcquisitionException}; the method does not run. */
	THROW,

	/**
	 * Do not run the method and return "nothing" for its return type: {@code null},
	 * {@code Optional.empty()}, an empty collection, map, stream or array, or for a
	 * {@code CompletableFuture} a future completed with one of these. Methods returning a
	 * primitive cannot use it (start-up fails). It does not wait for the lock unless the
	 * annotation's {@code waitTime} (or {@code lockstep.locks.<name>.wait-time}) is set:
	 * the skipped work is being done elsewhere, and running it late would defeat the
	 * skip.
	 */
	SKIP

}
