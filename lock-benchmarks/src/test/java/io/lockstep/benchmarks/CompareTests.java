package io.lockstep.benchmarks;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Compare} on two small JMH JSON results written by hand ({@code run.json},
 * {@code other-run.json}): one run as a table of contenders with ratios to the floor, and
 * several runs per contender with medians per label.
 */
class CompareTests {

	@Test
	void oneRunShowsEachFigureWithItsRatioToTheFloorInScenarioOrder() throws Exception {
		String table = Compare.render(List.of(Compare.read("run", fixture("run.json"))));
		assertThat(table).isEqualTo("""
				Each figure with its ratio to the floor's.

				|  | floor | lockstep | redisson |
				|---|---|---|---|
				| S1 pair · p50 µs | 200 | 250 (1.25×) | – |
				| S1 pair · p99 µs | 480 | 720 (1.50×) | – |
				| S1 pair · acquisitions/s | 4,700 | 3,760 (0.80×) | – |
				| S1 pair · commands/acq | 5.00 | 6.00 (1.20×) | – |
				| S3 handOff (per-thread) · acquisitions/s | 3,056 | 2,883 (0.94×) | – |
				| S3 handOff (per-thread) · hand-off p50 µs | 276 | 265 (0.96×) | – |
				| S3 handOff (per-thread) · hand-off p99 µs | 977 | 2,392 (2.45×) | – |
				| RW operation · acquisitions/s | – | 2,300 | 1,132 |
				| MACHINE roundTrip · p50 µs | 168 | – | – |
				| MACHINE roundTrip · p99 µs | 400 | – | – |
				""");
	}

	@Test
	void severalRunsShowEachContenderRunByRunWithTheMedianRatioOfEachLabel() throws Exception {
		Path run = fixture("run.json");
		Path other = fixture("other-run.json");
		String table = Compare
			.render(List.of(Compare.read("before", run), Compare.read("after", other), Compare.read("before", other)));
		assertThat(table).contains("""
				### lockstep

				|  | before | after | before | median before | median after |
				|---|---|---|---|---|---|
				| S1 pair · p50 µs | 250 (1.25×) | 230 (1.15×) | 230 (1.15×) | 1.20× | 1.15× |
				| S1 pair · p99 µs | 720 (1.50×) | 550 (1.10×) | 550 (1.10×) | 1.30× | 1.10× |
				| S1 pair · acquisitions/s | 3,760 (0.80×) | 3,960 (0.90×) | 3,960 (0.90×) | 0.85× | 0.90× |
				| S1 pair · commands/acq | 6.00 (1.20×) | 6.00 (1.20×) | 6.00 (1.20×) | 1.20× | 1.20× |
				| S3 handOff (per-thread) · acquisitions/s | 2,883 (0.94×) | – | – | 0.94× | – |
				""")
			// no floor in RW: the median of the figures
			.contains("| RW operation · acquisitions/s | 2,300 | – | – | 2,300 | – |\n")
			.contains(
					"### floor\n\n|  | before | after | before | median before | median after |\n|---|---|---|---|---|---|\n"
							+ "| S1 pair · p50 µs | 200 | 200 | 200 | 200 | 200 |\n")
			.contains("### redisson\n");
	}

	private static Path fixture(String name) throws URISyntaxException {
		return Path.of(CompareTests.class.getResource(name).toURI());
	}

}
