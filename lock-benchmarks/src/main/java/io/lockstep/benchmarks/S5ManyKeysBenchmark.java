package io.lockstep.benchmarks;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * S5: 8 threads over 1,000 keys picked at random, 1 ms inside: many locks, occasional
 * contention.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class S5ManyKeysBenchmark extends LockBenchmark {

	static final long SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	@Benchmark
	public void section(Slot slot) {
		int key = ThreadLocalRandom.current().nextInt(MAX_KEYS);
		lockOnce(slot, "bench:s5:" + key, key, SECTION_NANOS);
	}

}
