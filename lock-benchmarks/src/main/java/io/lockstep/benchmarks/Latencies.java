package io.lockstep.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * Latency samples in nanoseconds, recorded from many threads without locking (samples
 * past the capacity are dropped).
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

	/** Drops the samples; call while nobody records. */
	void clear() {
		this.next.set(0);
	}

	/** Passes each sample kept to {@code action}; call once recording has stopped. */
	void forEach(LongConsumer action) {
		int kept = Math.min(this.next.get(), this.samples.length);
		for (int i = 0; i < kept; i++) {
			action.accept(this.samples[i]);
		}
	}

}
