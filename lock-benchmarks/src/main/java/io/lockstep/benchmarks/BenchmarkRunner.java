package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the chosen scenarios for the chosen contenders in one go against one
 * {@code redis-server} it starts (and stops), and writes the report. Run by
 * {@code lock-benchmarks/run-benchmarks.sh}; {@code --help} lists the options.
 */
public final class BenchmarkRunner {

	static final List<String> FORK_JVM_ARGS = List.of("-Xms1g", "-Xmx1g");

	private BenchmarkRunner() {
	}

	public static void main(String[] args) throws IOException, RunnerException, InterruptedException {
		Settings settings = Settings.parse(args);
		if (settings == null) {
			System.out.println(Settings.USAGE);
			return;
		}
		long started = System.nanoTime();
		String loadBefore = Environment.loadAverage();
		deleteRecursively(settings.records);
		Collection<RunResult> results;
		String redisVersion;
		MachineProbe probe;
		try (RedisFixture fixture = new RedisFixture()) {
			RedisNode redis = fixture.standalone();
			redisVersion = fixture.redisVersion();
			System.out.println("Benchmarking against " + redis + ": " + redisVersion);
			results = run(settings, redis.port());
			System.out.println("Measuring Redis round trips right after another and after a 5 ms idle wait...");
			probe = MachineProbe.measure(redis.port());
			System.out.println(probe);
		}
		Map<String, Outcome> outcomes = Outcome.collect(results, settings.records);
		List<String> failures = failures(settings, outcomes);
		RunInfo run = new RunInfo(settings.scenarios, settings.contenders, settings.clients, settings.warmup.describe(),
				settings.measurement.describe(), redisVersion, probe,
				ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")),
				elapsed(Duration.ofNanos(System.nanoTime() - started)), loadBefore, Environment.loadAverage(),
				settings.commandLine(), failures);
		Files.createDirectories(settings.report.toAbsolutePath().getParent());
		Files.writeString(settings.report, new Report(outcomes, run).render(), StandardCharsets.UTF_8);
		System.out.println("Wrote " + settings.report + " (" + run.elapsed() + ")");
		if (!failures.isEmpty()) {
			System.err.println("Failed: " + String.join(", ", failures));
			System.exit(1);
		}
	}

	/**
	 * Runs JMH once per group of scenarios that run the same contenders (JMH's parameter
	 * values apply to every benchmark of a run), in the order chosen, and writes JMH's
	 * JSON result of all of them.
	 */
	private static Collection<RunResult> run(Settings settings, int port) throws RunnerException, IOException {
		Map<List<String>, List<Scenario>> groups = new LinkedHashMap<>();
		for (Scenario scenario : settings.scenarios) {
			List<String> contenders = settings.contenders.stream().filter(scenario::runs).toList();
			if (!contenders.isEmpty()) {
				groups.computeIfAbsent(contenders, (key) -> new ArrayList<>()).add(scenario);
			}
		}
		List<RunResult> results = new ArrayList<>();
		for (Map.Entry<List<String>, List<Scenario>> group : groups.entrySet()) {
			results.addAll(new Runner(options(settings, port, group.getValue(), group.getKey()).build()).run());
		}
		Files.createDirectories(settings.json.toAbsolutePath().getParent());
		ResultFormatFactory.getInstance(ResultFormatType.JSON, settings.json.toString()).writeOut(results);
		return results;
	}

	private static ChainedOptionsBuilder options(Settings settings, int port, List<Scenario> scenarios,
			List<String> contenders) {
		ChainedOptionsBuilder options = new OptionsBuilder().forks(1)
			.warmupIterations(settings.warmup.iterations)
			.warmupTime(TimeValue.seconds(settings.warmup.seconds))
			.measurementIterations(settings.measurement.iterations)
			.measurementTime(TimeValue.seconds(settings.measurement.seconds))
			.timeout(TimeValue.minutes(2))
			.shouldFailOnError(false)
			.param("contender", contenders.toArray(String[]::new))
			.param("clients", settings.clients.toArray(String[]::new))
			.jvmArgsAppend(Stream
				.concat(FORK_JVM_ARGS.stream(),
						Stream.of("-D" + RedisTarget.PORT_PROPERTY + "=" + port,
								"-D" + TrialRecord.DIRECTORY_PROPERTY + "=" + settings.records.toAbsolutePath(),
								"-Dlockstep.bench.commit=" + System.getProperty("lockstep.bench.commit", "")))
				.toArray(String[]::new));
		scenarios.forEach((scenario) -> options.include(scenario.include()));
		return options;
	}

	private static List<String> failures(Settings settings, Map<String, Outcome> outcomes) {
		List<String> failures = new ArrayList<>();
		for (Scenario scenario : settings.scenarios) {
			for (String contender : settings.contenders) {
				if (!scenario.runs(contender)) {
					continue;
				}
				for (String clients : scenario.clients()) {
					if (settings.clients.contains(clients)
							&& !outcomes.containsKey(Outcome.key(scenario, contender, clients))) {
						failures.add(scenario + " " + contender + " (" + clients + ")");
					}
				}
			}
		}
		return failures;
	}

	private static String elapsed(Duration duration) {
		return duration.toMinutes() + " min " + duration.toSecondsPart() + " s";
	}

	private static void deleteRecursively(Path directory) throws IOException {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.delete(path);
			}
		}
	}

	/** The command line, parsed. */
	static final class Settings {

		static final String USAGE = """
				Usage: run-benchmarks.sh [options]
				  --scenarios S1,S2,S3,S4,S5,RW,SEM scenarios to run (default: all)
				  --contenders floor,lockstep,... contenders (default: floor,lockstep,redisson,si-spin,si-pubsub;
				                                  RW and SEM run only lockstep and redisson among them)
				  --clients shared,per-thread     client modes of S3/S4 (default: both; S1, S2, S5 run shared)
				  --warmup NxS                    N warm-up iterations of S seconds per fork (default 1x2)
				  --measurement NxS               N measurement iterations of S seconds per fork (default 3x2)
				  --report FILE                   the Markdown report (default docs/benchmarks.md)
				  --records DIR                   where forks leave their counts (default lock-benchmarks/target/benchmark-records)
				  --json FILE                     JMH's JSON result (default lock-benchmarks/target/jmh-result.json)
				""";

		List<Scenario> scenarios = List.of(Scenario.values());

		List<String> contenders = Contenders.ids();

		List<String> clients = List.of(Scenario.Clients.SHARED, Scenario.Clients.PER_THREAD);

		Iterations warmup = new Iterations(1, 2);

		Iterations measurement = new Iterations(3, 2);

		Path report = Path.of("docs/benchmarks.md");

		Path records = Path.of("lock-benchmarks/target/benchmark-records");

		Path json = Path.of("lock-benchmarks/target/jmh-result.json");

		private final List<String> args = new ArrayList<>();

		/** The settings, or {@code null} for {@code --help}. */
		static Settings parse(String[] args) {
			Settings settings = new Settings();
			settings.args.addAll(Arrays.asList(args));
			for (int i = 0; i < args.length; i++) {
				String option = args[i];
				if (option.equals("--help") || option.equals("-h")) {
					return null;
				}
				if (i + 1 >= args.length) {
					throw new IllegalArgumentException("Missing value after " + option + "\n" + USAGE);
				}
				String value = args[++i];
				switch (option) {
					case "--scenarios" -> settings.scenarios = split(value).stream().map(Scenario::valueOf).toList();
					case "--contenders" ->
						settings.contenders = split(value).stream().map((id) -> Contenders.of(id).id()).toList();
					case "--clients" -> settings.clients = split(value);
					case "--warmup" -> settings.warmup = Iterations.parse(value);
					case "--measurement" -> settings.measurement = Iterations.parse(value);
					case "--report" -> settings.report = Path.of(value);
					case "--records" -> settings.records = Path.of(value);
					case "--json" -> settings.json = Path.of(value);
					default -> throw new IllegalArgumentException("Unknown option " + option + "\n" + USAGE);
				}
			}
			return settings;
		}

		String commandLine() {
			return ("lock-benchmarks/run-benchmarks.sh " + String.join(" ", this.args)).trim();
		}

		private static List<String> split(String value) {
			return Arrays.stream(value.split(",")).map(String::trim).filter((part) -> !part.isEmpty()).toList();
		}

	}

	/** {@code N} iterations of {@code S} seconds, written {@code NxS}. */
	record Iterations(int iterations, int seconds) {

		static Iterations parse(String value) {
			String[] parts = value.split("x");
			if (parts.length != 2) {
				throw new IllegalArgumentException("Expected NxS (e.g. 3x2), got " + value);
			}
			return new Iterations(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
		}

		String describe() {
			return this.iterations + " × " + this.seconds + " s";
		}

	}

}
