package io.lockstep.benchmarks;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Latency samples in nanoseconds, recorded from many threads without locking (samples
 * past the capacity are dropped and counted).
 */
final class Latencies {

	private final long[] samples;

	private final AtomicInteger next = new AtomicInteger();

	Latencies(int capacity) {
		this.samples = new long[capacity];
	}

	void record(long nanos) {
		int slot = this.next.getAndIncrement();
		if (slot < this.samples.length) {
			this.samples[slot] = nanos;
		}
	}

	/** Samples recorded, dropped ones included. */
	int count() {
		return this.next.get();
	}

	/**
	 * The nearest-rank percentile ({@code 0 < percentile <= 100}) in nanoseconds, or -1
	 * without samples. Call once recording has stopped.
	 */
	long percentile(double percentile) {
		int kept = Math.min(this.next.get(), this.samples.length);
		if (kept == 0) {
			return -1;
		}
		long[] sorted = Arrays.copyOf(this.samples, kept);
		Arrays.sort(sorted);
		int rank = (int) Math.ceil(percentile / 100 * kept);
		return sorted[Math.max(0, rank - 1)];
	}

}
