package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * S2: 8 threads, each on a key of its own, empty critical section: acquire+release pairs
 * per second with no contention, with one client for all threads (one application
 * instance under load) or one each (as many instances).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class S2DistinctKeysBenchmark extends LockBenchmark {

	/** One client for all threads, or one per thread. */
	@Param({ "shared", "per-thread" })
	public String clients;

	@Override
	String clients() {
		return this.clients;
	}

	@Benchmark
	public void pair(Slot slot) {
		lockOnce(slot, "bench:s2:" + slot.index, slot.index, 0);
	}

}
