package io.lockstep;

/**
 * How a caller holds a key: shared with the other readers of the key, or exclusively. A
 * plain lock is the key's write lock, so code can move from plain to read/write locks one
 * caller at a time.
 */
public enum LockMode {

	/**
	 * Shared with the other readers of the key; excludes writers. Readers that come after
	 * a waiting writer wait behind it, so a stream of readers does not starve it.
	 */
	READ,

	/** Exclusive: excludes readers and writers (the plain lock). */
	WRITE

}
