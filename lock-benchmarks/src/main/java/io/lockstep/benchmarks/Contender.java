package io.lockstep.benchmarks;

/**
 * One lock implementation under test, as one application instance would use it: a client
 * built once and shared by the threads that call {@link #acquire(String)}.
 */
public interface Contender extends AutoCloseable {

	/**
	 * Blocks until this thread holds {@code key} (without a deadline worth mentioning:
	 * every contender waits up to a minute).
	 */
	Held acquire(String key);

	/**
	 * Blocks until this thread holds the read lock of {@code key}, shared with its other
	 * readers and excluding its writers.
	 * @throws UnsupportedOperationException if this contender has no read/write lock
	 */
	default Held acquireRead(String key) {
		throw notApplicable("read/write locks");
	}

	/**
	 * Blocks until this thread holds the write lock of {@code key}, excluding its readers
	 * and writers.
	 * @throws UnsupportedOperationException if this contender has no read/write lock
	 */
	default Held acquireWrite(String key) {
		throw notApplicable("read/write locks");
	}

	/**
	 * Blocks until this thread holds one of the {@code permits} permits of the semaphore
	 * {@code key}.
	 * @throws UnsupportedOperationException if this contender has no semaphore
	 */
	default Held acquirePermit(String key, int permits) {
		throw notApplicable("semaphores");
	}

	/** Shuts the client down. */
	@Override
	void close();

	private UnsupportedOperationException notApplicable(String what) {
		return new UnsupportedOperationException(getClass().getSimpleName() + " has no " + what
				+ ": the scenarios that need them run only the contenders their Scenario lists");
	}

	/** A held lock; {@link #release()} is called once, by the thread that acquired it. */
	@FunctionalInterface
	interface Held {

		void release();

	}

}
