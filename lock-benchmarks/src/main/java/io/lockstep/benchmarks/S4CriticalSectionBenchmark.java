package io.lockstep.benchmarks;

import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * S4: 4 threads on one key, 5 ms inside. A perfect lock is busy all the time: 200
 * acquisitions per second; {@code efficiency} = acquisitions/s ÷ 200.
 *
 * <p>
 * Hand-off latency, as in S3: from the moment the holder starts its release call to the
 * moment the next holder, another thread, is inside; here the waiters have idled for the
 * 5 ms in between.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(4)
@Fork(1)
@Warmup(iterations = 1, time = 1)
@Measurement(iterations = 2, time = 1)
public class S4CriticalSectionBenchmark extends OneKeyBenchmark {

	static final long SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final String KEY = "bench:s4";

	@Benchmark
	public void section(Slot slot) {
		holdOnce(slot, KEY, () -> CriticalSection.spend(SECTION_NANOS));
	}

	@Override
	void iterationEnded(List<Result<?>> results, long acquisitions, long nanos) {
		super.iterationEnded(results, acquisitions, nanos);
		results.add(new ScalarResult("efficiency", 100.0 * acquisitions * SECTION_NANOS / nanos, "%",
				AggregationPolicy.AVG));
	}

}
