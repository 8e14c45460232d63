package io.lockstep.benchmarks;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The exclusion check: how many threads are inside the critical section of each key right
 * now. A second thread inside at once is an overlap, and fails the benchmark at once.
 */
final class Occupancy {

	private final AtomicIntegerArray holders;

	Occupancy(int keys) {
		this.holders = new AtomicIntegerArray(keys);
	}

	/**
	 * Enters the critical section of {@code key}.
	 * @throws ExclusionViolation if another thread is inside it (nothing to exit then)
	 */
	void enter(int key) {
		int inside = this.holders.incrementAndGet(key);
		if (inside != 1) {
			this.holders.decrementAndGet(key);
			throw new ExclusionViolation(
					"Exclusion broken: " + inside + " threads inside the critical section of key #" + key + " at once");
		}
	}

	void exit(int key) {
		this.holders.decrementAndGet(key);
	}

	/** Two holders of one key at once: the lock under test is broken. */
	static final class ExclusionViolation extends IllegalStateException {

		ExclusionViolation(String message) {
			super(message);
		}

	}

}
