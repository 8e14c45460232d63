package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.results.SampleTimeResult;
import org.openjdk.jmh.util.SampleBuffer;

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

	/** At the start of every iteration: no release to measure from yet, no samples. */
	void reset() {
		this.releaseStarted = 0;
		this.latencies.clear();
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

	/**
	 * The iteration's samples as a JMH result ({@code hand-off}, in µs), whose
	 * percentiles JMH computes over all measurement iterations.
	 */
	SampleTimeResult result() {
		SampleBuffer buffer = new SampleBuffer();
		this.latencies.forEach(buffer::add);
		return new SampleTimeResult(ResultRole.SECONDARY, "hand-off", buffer, TimeUnit.MICROSECONDS);
	}

}
