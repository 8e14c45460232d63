package io.lockstep.benchmarks;

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
 * SEM: 8 threads, one semaphore of {@value #PERMITS} permits with one shared client, 1 ms
 * inside: acquisitions per second. A perfect semaphore keeps all its permits busy:
 * {@value #PERMITS} × 1,000 acquisitions per second. More than {@value #PERMITS} holders
 * inside at once fails the run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class SemSemaphoreBenchmark extends SharedKeyBenchmark {

	static final int PERMITS = 3;

	private static final String KEY = "bench:sem";

	@Benchmark
	public void acquisition(Slot slot) {
		permit(slot, KEY, PERMITS);
	}

}
