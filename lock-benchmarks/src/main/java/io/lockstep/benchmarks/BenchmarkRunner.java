package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.lockstep.test.RedisFixture;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the chosen scenarios for the chosen contenders, one JMH run per scenario, against
 * one {@code redis-server} it starts (and stops); writes JMH's JSON result and the
 * {@link Compare} table of it. Run by {@code lock-benchmarks/run-benchmarks.sh}.
 */
public final class BenchmarkRunner {

	static final String USAGE = """
			Usage: run-benchmarks.sh [options]          run scenarios, write JMH's JSON and a comparison
			       run-benchmarks.sh --compare [label=]result.json ...   compare JSON results of one or more runs
			  --scenarios S1,S2,S3,S4,S5,RW,SEM,MACHINE  scenarios (default: all; RW and SEM run only
			                                  lockstep and redisson, MACHINE raw Lettuce)
			  --contenders floor,lockstep,... contenders (default: floor,parked,lockstep,redisson,si-spin,si-pubsub)
			                                  (also lockstep-try-first: Lockstep tried before it waits)
			  --clients shared,per-thread     client modes of S2, S3 and S4 (default: both; the others run shared)
			  --warmup NxS                    N warm-up iterations of S seconds per fork (default 1x2)
			  --measurement NxS               N measurement iterations of S seconds per fork (default 3x2)
			  --json FILE                     JMH's JSON result (default lock-benchmarks/target/jmh-result.json)
			  --report FILE                   the comparison, Markdown (default lock-benchmarks/target/benchmarks.md)
			""";

	private BenchmarkRunner() {
	}

	public static void main(String[] args) throws IOException, RunnerException {
		Map<String, String> options = new LinkedHashMap<>(Map.of("--scenarios", "S1,S2,S3,S4,S5,RW,SEM,MACHINE",
				"--contenders", String.join(",", Contenders.defaults()), "--clients", "shared,per-thread", "--warmup",
				"1x2", "--measurement", "3x2", "--json", "lock-benchmarks/target/jmh-result.json", "--report",
				"lock-benchmarks/target/benchmarks.md"));
		for (int i = 0; i < args.length; i += 2) {
			if (!options.containsKey(args[i]) || i + 1 == args.length) {
				System.out.println(args[i].equals("--help") ? USAGE : "Cannot read " + args[i] + "\n" + USAGE);
				System.exit(args[i].equals("--help") ? 0 : 2);
			}
			options.put(args[i], args[i + 1]);
		}
		List<String> contenders = split(options.get("--contenders"));
		contenders.forEach(Contenders::of);
		List<String> clients = split(options.get("--clients"));
		String loadBefore = loadAverage();
		List<RunResult> results = new ArrayList<>();
		List<String> failed = new ArrayList<>();
		String redis;
		try (RedisFixture fixture = new RedisFixture()) {
			int port = fixture.standalone().port();
			redis = fixture.redisVersion();
			for (Scenario scenario : split(options.get("--scenarios")).stream().map(Scenario::valueOf).toList()) {
				List<String> runs = contenders.stream().filter(scenario::runs).toList();
				if (runs.isEmpty()) {
					continue;
				}
				Collection<RunResult> ran = new Runner(new OptionsBuilder().include(scenario.include())
					.forks(1)
					.warmupIterations(iterations(options.get("--warmup"), 0))
					.warmupTime(TimeValue.seconds(iterations(options.get("--warmup"), 1)))
					.measurementIterations(iterations(options.get("--measurement"), 0))
					.measurementTime(TimeValue.seconds(iterations(options.get("--measurement"), 1)))
					.timeout(TimeValue.minutes(2))
					.shouldFailOnError(false)
					.addProfiler(LockProfiler.class)
					.param("contender", runs.toArray(String[]::new))
					.param("clients", clients.toArray(String[]::new))
					.jvmArgsAppend("-Xms1g", "-Xmx1g", "-D" + RedisTarget.PORT_PROPERTY + "=" + port)
					.build()).run();
				results.addAll(ran);
				failed.addAll(missing(scenario, runs, clients, ran));
			}
		}
		Path json = Path.of(options.get("--json"));
		Path report = Path.of(options.get("--report"));
		Files.createDirectories(json.toAbsolutePath().getParent());
		Files.createDirectories(report.toAbsolutePath().getParent());
		ResultFormatFactory.getInstance(ResultFormatType.JSON, json.toString()).writeOut(results);
		String table = "# Benchmark run\n\n`run-benchmarks.sh " + String.join(" ", args) + "` at commit "
				+ System.getProperty("lockstep.bench.commit", "unknown") + ", "
				+ ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")) + "; "
				+ redis + "; load average (1 min) " + loadBefore + " before, " + loadAverage() + " after; JMH JSON: `"
				+ json + "`." + (failed.isEmpty() ? "" : " **Failed**: " + failed + ".") + "\n\n"
				+ Compare.render(List.of(Compare.read("run", json)));
		Files.writeString(report, table);
		System.out.println("\n" + table + "\nWrote " + report + " and " + json);
		if (!failed.isEmpty()) {
			System.exit(1);
		}
	}

	/** The contenders and client modes of {@code scenario} that gave no result. */
	private static List<String> missing(Scenario scenario, List<String> contenders, List<String> clients,
			Collection<RunResult> ran) {
		Set<String> got = new HashSet<>();
		ran.forEach((result) -> got.add(result.getParams().getParam("contender") + " "
				+ (scenario.hasClientModes() ? result.getParams().getParam("clients") : "shared")));
		List<String> missing = new ArrayList<>();
		for (String contender : scenario.measuresContenders() ? contenders : List.<String>of()) {
			for (String mode : scenario.hasClientModes() ? clients : List.of("shared")) {
				if (!got.contains(contender + " " + mode)) {
					missing.add(scenario + " " + contender + " (" + mode + ")");
				}
			}
		}
		return missing;
	}

	/** Part {@code index} of {@code NxS}: 0 the iterations, 1 the seconds. */
	private static int iterations(String value, int index) {
		String[] parts = value.split("x");
		if (parts.length != 2) {
			throw new IllegalArgumentException("Expected NxS (e.g. 3x2), got " + value);
		}
		return Integer.parseInt(parts[index]);
	}

	private static List<String> split(String value) {
		return Arrays.stream(value.split(",")).map(String::trim).filter((part) -> !part.isEmpty()).toList();
	}

	private static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
		}
		catch (IOException | RuntimeException ex) {
			return "unknown";
		}
	}

}
