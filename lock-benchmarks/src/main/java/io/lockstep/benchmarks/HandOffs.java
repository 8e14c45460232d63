package io.lockstep.benchmarks;

/**
 * Hand-off latency of a one-key scenario: from the moment the holder starts its release
 * call to the moment the next holder, another thread, is inside, from
 * {@link System#nanoTime()} stamps; recorded during measurement iterations only.
 */
final class HandOffs {

	private final Latencies latencies;

	private volatile long releaseStarted;

	private volatile int holder = -1;

	HandOffs(int capacity) {
		this.latencies = new Latencies(capacity);
	}

	/** At the start of every iteration: no release to measure from yet. */
	void reset() {
		this.releaseStarted = 0;
	}

	/**
	 * The thread is inside (call inside the critical section): a hand-off when it is not
	 * the previous holder.
	 * @param inside when it got in
	 */
	void entered(int thread, long inside, boolean measuring) {
		long released = this.releaseStarted;
		if (measuring && this.holder != thread && released != 0) {
			this.latencies.record(inside - released);
		}
		this.holder = thread;
	}

	/** The holder is about to release (call as it leaves the critical section). */
	void releasing() {
		this.releaseStarted = System.nanoTime();
	}

	void report(TrialRecord record) {
		record.handOffSamples = this.latencies.count();
		record.handOffP50Nanos = this.latencies.percentile(50);
		record.handOffP99Nanos = this.latencies.percentile(99);
	}

}
