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
 * RW: 8 threads on one key with one shared client; each operation is a read (90 %) or a
 * write (10 %, drawn at random), 1 ms inside: operations per second. Readers share the
 * key, a writer excludes everyone: anyone inside together with a writer fails the run,
 * and a trial in which readers never overlapped fails too.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(8)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class RwReadWriteBenchmark extends SharedKeyBenchmark {

	static final int WRITE_PERCENT = 10;

	private static final String KEY = "bench:rw";

	@Benchmark
	public void operation(Slot slot) {
		if (ThreadLocalRandom.current().nextInt(100) < WRITE_PERCENT) {
			write(slot, KEY);
		}
		else {
			read(slot, KEY);
		}
	}

}
