package io.lockstep.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * One scenario × contender × client mode as measured: JMH's score with the spread of its
 * iterations, the sample-time percentiles (S1), and the fork's {@link TrialRecord}.
 *
 * @param score JMH's primary score ({@code unit})
 * @param min the lowest iteration score (JMH's)
 * @param max the highest iteration score (JMH's)
 * @param p50 the median sample (sample-time mode only, else NaN)
 * @param p99 the 99th percentile sample (sample-time mode only, else NaN)
 * @param record what the fork counted; {@code null} if it wrote nothing
 */
record Outcome(Scenario scenario, String contender, String clients, double score, String unit, double min, double max,
		double p50, double p99, TrialRecord record) {

	/**
	 * Acquisitions per wall-clock second over the measurement iterations (see
	 * {@link LockBenchmark}), or NaN without a record.
	 */
	double rate() {
		return (this.record != null) ? this.record.rate() : Double.NaN;
	}

	double rateMin() {
		return (this.record != null)
				? this.record.rates.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN) : Double.NaN;
	}

	double rateMax() {
		return (this.record != null)
				? this.record.rates.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN) : Double.NaN;
	}

	/** Commands per acquisition, or NaN without a record. */
	double commandsPerAcquisition() {
		return (this.record != null) ? this.record.commandsPerAcquisition() : Double.NaN;
	}

	double subscriptionsPerAcquisition() {
		return (this.record != null) ? this.record.subscriptionsPerAcquisition() : Double.NaN;
	}

	double handOffP50Micros() {
		return (this.record != null && this.record.handOffP50Nanos >= 0) ? this.record.handOffP50Nanos / 1000.0
				: Double.NaN;
	}

	double handOffP99Micros() {
		return (this.record != null && this.record.handOffP99Nanos >= 0) ? this.record.handOffP99Nanos / 1000.0
				: Double.NaN;
	}

	/** The outcomes of a JMH run, keyed by {@link #key}, with the records forks wrote. */
	static Map<String, Outcome> collect(Collection<RunResult> results, Path records) {
		Map<String, Outcome> outcomes = new LinkedHashMap<>();
		for (RunResult result : results) {
			String method = result.getParams().getBenchmark();
			String type = method.substring(0, method.lastIndexOf('.'));
			Scenario scenario = Scenario.ofBenchmark(type.substring(type.lastIndexOf('.') + 1));
			String contender = result.getParams().getParam("contender");
			String clients = Optional.ofNullable(result.getParams().getParam("clients"))
				.orElse(Scenario.Clients.SHARED);
			Result<?> primary = result.getPrimaryResult();
			List<Double> iterations = new ArrayList<>();
			for (BenchmarkResult benchmark : result.getBenchmarkResults()) {
				for (IterationResult iteration : benchmark.getIterationResults()) {
					iterations.add(iteration.getPrimaryResult().getScore());
				}
			}
			boolean sampled = scenario == Scenario.S1;
			Path file = records.resolve(TrialRecord.fileName(scenario.benchmark().getSimpleName(), contender, clients));
			TrialRecord record = Files.exists(file) ? TrialRecord.read(file) : null;
			outcomes.put(key(scenario, contender, clients),
					new Outcome(scenario, contender, clients, primary.getScore(), primary.getScoreUnit(),
							iterations.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
							iterations.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN),
							sampled ? primary.getStatistics().getPercentile(50) : Double.NaN,
							sampled ? primary.getStatistics().getPercentile(99) : Double.NaN, record));
		}
		return outcomes;
	}

	static String key(Scenario scenario, String contender, String clients) {
		return scenario + "/" + contender + "/" + clients;
	}

}
