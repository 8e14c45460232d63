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

	/** Shuts the client down. */
	@Override
	void close();

	/** A held lock; {@link #release()} is called once, by the thread that acquired it. */
	@FunctionalInterface
	interface Held {

		void release();

	}

}
