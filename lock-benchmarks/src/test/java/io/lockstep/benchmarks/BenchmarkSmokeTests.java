package io.lockstep.benchmarks;

import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pipeline end to end, briefly and in this JVM (no fork, so not a measurement): JMH
 * runs S1 for the floor and Lockstep, after a short warm-up, S3 for Lockstep with one
 * shared client, and MACHINE, against a real Redis, {@link LockProfiler} hands what they
 * counted to JMH, JMH writes its JSON, and {@link Compare} reads it back into the table.
 */
@RedisTest
class BenchmarkSmokeTests {

	@Test
	void scenariosRunAndTheirCountsReachTheJsonAndTheComparison(RedisNode redis, @TempDir Path directory)
			throws Exception {
		System.setProperty(RedisTarget.PORT_PROPERTY, Integer.toString(redis.port()));
		try {
			Collection<RunResult> results = run(Scenario.S1, "floor", "lockstep");
			results.addAll(run(Scenario.S3, "lockstep"));
			results.addAll(run(Scenario.MACHINE));
			Path json = directory.resolve("result.json");
			ResultFormatFactory.getInstance(ResultFormatType.JSON, json.toString()).writeOut(results);
			String table = Compare.render(List.of(Compare.read("smoke", json)));
			assertThat(table).startsWith("Each figure with its ratio to the floor's.\n\n|  | floor | lockstep |\n")
				.containsPattern("\\| S1 pair · p50 µs \\| [0-9.,]+ \\| [0-9.,]+ \\([0-9.]+×\\) \\|")
				// the uncontended pair: 2 scripts and the commands they run (5 and 6)
				.contains("| S1 pair · commands/acq | 5.00 | 6.00 (1.20×) |")
				.contains("| S1 pair · subscribes/acq | 0.00 | 0.00 |")
				.containsPattern("\\| S1 pair · redis time/script µs \\| [0-9.,]+ \\| [0-9.,]+ \\([0-9.]+×\\) \\|")
				.containsPattern("\\| S1 pair · jvm cpu/acq µs \\| [0-9.,]+ \\| [0-9.,]+ \\([0-9.]+×\\) \\|")
				.containsPattern("\\| S1 pair · jvm alloc/acq B \\| [0-9.,]+ \\| [0-9.,]+ \\([0-9.]+×\\) \\|")
				.containsPattern("\\| S3 handOff \\(shared\\) · acquisitions/s \\| – \\| [0-9.,]+ \\|")
				.containsPattern("\\| S3 handOff \\(shared\\) · hand-off p50 µs \\| – \\| [0-9.,]+ \\|")
				.containsPattern("\\| S3 handOff \\(shared\\) · hand-off p99 µs \\| – \\| [0-9.,]+ \\|")
				// every acquisition of S3 goes to another thread than the previous one
				.contains("| S3 handOff (shared) · holder changes % | – | 100 |")
				// MACHINE has no contender: raw Lettuce, under the floor; a 5 ms park
				// lasts 5 ms or more
				.containsPattern("\\| MACHINE notification · p50 µs \\| [0-9.,]+ \\| – \\|")
				.containsPattern("\\| MACHINE park · p50 µs \\| (?:[5-9]|[1-9][0-9]+),[0-9]{3} \\| – \\|")
				.containsPattern("\\| MACHINE roundTrip · p50 µs \\| [0-9.,]+ \\| – \\|")
				.containsPattern("\\| MACHINE roundTripAfterIdle · p50 µs \\| [0-9.,]+ \\| – \\|");
		}
		finally {
			System.clearProperty(RedisTarget.PORT_PROPERTY);
		}
	}

	private static Collection<RunResult> run(Scenario scenario, String... contenders) throws Exception {
		OptionsBuilder options = new OptionsBuilder();
		if (contenders.length > 0) {
			options.param("contender", contenders);
		}
		return new Runner(options.include(scenario.include())
			.forks(0)
			.warmupIterations(1)
			.warmupTime(TimeValue.milliseconds(200))
			.measurementIterations(1)
			.measurementTime(TimeValue.milliseconds(300))
			.addProfiler(LockProfiler.class)
			.param("clients", "shared")
			.build()).run();
	}

}
