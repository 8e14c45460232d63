package io.lockstep.benchmarks;

import java.util.Collection;
import java.util.List;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;

/**
 * Hands what a {@link LockBenchmark} counted in a measurement iteration to JMH as
 * secondary results, so that they land in JMH's output and its JSON next to the score.
 * {@link BenchmarkRunner} adds it; with JMH's own command line:
 * {@code -prof io.lockstep.benchmarks.LockProfiler}.
 */
public final class LockProfiler implements InternalProfiler {

	private static volatile List<Result<?>> counted = List.of();

	/** What the iteration that is ending counted; called by its teardown. */
	static void publish(List<Result<?>> results) {
		counted = List.copyOf(results);
	}

	@Override
	public void beforeIteration(BenchmarkParams benchmark, IterationParams iteration) {
		counted = List.of();
	}

	@Override
	public Collection<? extends Result> afterIteration(BenchmarkParams benchmark, IterationParams iteration,
			IterationResult result) {
		return counted;
	}

	@Override
	public String getDescription() {
		return "Lockstep benchmarks: acquisitions/s by wall clock, Redis calls, CPU time, hand-off latency";
	}

}
