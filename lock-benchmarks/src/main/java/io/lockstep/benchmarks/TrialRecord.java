package io.lockstep.benchmarks;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What a JMH fork measured besides its score, summed over its measurement iterations:
 * acquisitions and the wall-clock time they took, Redis commands by name (from
 * {@code INFO commandstats}), holder changes and hand-off latencies; for a key with
 * several holders, the writes among the acquisitions and the most holders inside at once.
 * The fork writes it as a properties file into the folder named by
 * {@value #DIRECTORY_PROPERTY}; {@link BenchmarkRunner} reads it back.
 */
final class TrialRecord {

	static final String DIRECTORY_PROPERTY = "lockstep.bench.records";

	final String scenario;

	final String contender;

	final String clients;

	long iterations;

	long acquisitions;

	long holderChanges;

	long nanos;

	final List<Double> rates = new ArrayList<>();

	final Map<String, Long> commands = new TreeMap<>();

	/**
	 * Redis time per command name, in microseconds (a script's includes its commands).
	 */
	final Map<String, Long> micros = new TreeMap<>();

	long handOffSamples;

	long handOffP50Nanos = -1;

	long handOffP99Nanos = -1;

	/** Writes among the acquisitions of a shared-key scenario (RW; 0 in SEM), else -1. */
	long writes = -1;

	/**
	 * The most holders inside a shared key at once (RW: readers; SEM: permit holders), -1
	 * where not counted.
	 */
	long mostInside = -1;

	TrialRecord(String scenario, String contender, String clients) {
		this.scenario = scenario;
		this.contender = contender;
		this.clients = clients;
	}

	/**
	 * Adds one measurement iteration that lasted {@code nanos} from its setup to its
	 * teardown (all threads in).
	 */
	void add(RedisTarget.CommandStats before, RedisTarget.CommandStats after, long acquisitions, long holderChanges,
			long nanos) {
		add(before.calls(), after.calls(), acquisitions, holderChanges, nanos);
		after.micros().forEach((name, micros) -> {
			long delta = micros - before.micros().getOrDefault(name, 0L);
			if (delta > 0) {
				this.micros.merge(name, delta, Long::sum);
			}
		});
	}

	/** Like the other {@code add}, with command calls only (no Redis time). */
	void add(Map<String, Long> before, Map<String, Long> after, long acquisitions, long holderChanges, long nanos) {
		this.iterations++;
		this.acquisitions += acquisitions;
		this.holderChanges += holderChanges;
		this.nanos += nanos;
		this.rates.add(acquisitions * 1e9 / nanos);
		after.forEach((name, calls) -> {
			long delta = calls - before.getOrDefault(name, 0L);
			if (delta > 0) {
				this.commands.merge(name, delta, Long::sum);
			}
		});
	}

	/**
	 * Acquisitions per second of wall-clock time over the measurement iterations, or NaN
	 * without any.
	 */
	double rate() {
		return (this.nanos > 0) ? this.acquisitions * 1e9 / this.nanos : Double.NaN;
	}

	/**
	 * Redis time per call of the command, in microseconds, or NaN when not measured (a
	 * script's time includes the commands it runs).
	 */
	double microsPerCall(String name) {
		Long calls = this.commands.get(name);
		Long time = this.micros.get(name);
		return (calls != null && time != null && calls > 0) ? (double) time / calls : Double.NaN;
	}

	long totalCommands() {
		return this.commands.values().stream().mapToLong(Long::longValue).sum();
	}

	/** Redis commands (scripts' included) per acquisition, or NaN without any. */
	double commandsPerAcquisition() {
		return perAcquisition(totalCommands());
	}

	/** (P|S)SUBSCRIBE and their UNSUBSCRIBE per acquisition. */
	double subscriptionsPerAcquisition() {
		long calls = this.commands.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().endsWith("subscribe"))
			.mapToLong(Map.Entry::getValue)
			.sum();
		return perAcquisition(calls);
	}

	double perAcquisition(long calls) {
		return (this.acquisitions > 0) ? (double) calls / this.acquisitions : Double.NaN;
	}

	static String fileName(String scenario, String contender, String clients) {
		return scenario + "-" + contender + "-" + clients + ".properties";
	}

	/** Writes this record where {@value #DIRECTORY_PROPERTY} says; no-op without it. */
	void writeIfRequested() {
		String directory = System.getProperty(DIRECTORY_PROPERTY);
		if (directory == null) {
			return;
		}
		Properties properties = new Properties();
		properties.setProperty("scenario", this.scenario);
		properties.setProperty("contender", this.contender);
		properties.setProperty("clients", this.clients);
		properties.setProperty("iterations", Long.toString(this.iterations));
		properties.setProperty("acquisitions", Long.toString(this.acquisitions));
		properties.setProperty("holderChanges", Long.toString(this.holderChanges));
		properties.setProperty("nanos", Long.toString(this.nanos));
		properties.setProperty("rates",
				this.rates.stream().map((rate) -> Double.toString(rate)).collect(Collectors.joining(",")));
		properties.setProperty("handOff.samples", Long.toString(this.handOffSamples));
		properties.setProperty("handOff.p50", Long.toString(this.handOffP50Nanos));
		properties.setProperty("handOff.p99", Long.toString(this.handOffP99Nanos));
		properties.setProperty("writes", Long.toString(this.writes));
		properties.setProperty("mostInside", Long.toString(this.mostInside));
		this.commands.forEach((name, calls) -> properties.setProperty("cmd." + name, Long.toString(calls)));
		this.micros.forEach((name, micros) -> properties.setProperty("usec." + name, Long.toString(micros)));
		Path file = Path.of(directory, fileName(this.scenario, this.contender, this.clients));
		try {
			Files.createDirectories(file.getParent());
			try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
				properties.store(out, "Lockstep benchmark trial record");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write " + file, ex);
		}
	}

	static TrialRecord read(Path file) {
		Properties properties = new Properties();
		try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
			properties.load(in);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + file, ex);
		}
		TrialRecord record = new TrialRecord(properties.getProperty("scenario"), properties.getProperty("contender"),
				properties.getProperty("clients"));
		record.iterations = Long.parseLong(properties.getProperty("iterations"));
		record.acquisitions = Long.parseLong(properties.getProperty("acquisitions"));
		record.holderChanges = Long.parseLong(properties.getProperty("holderChanges"));
		record.nanos = Long.parseLong(properties.getProperty("nanos"));
		for (String rate : properties.getProperty("rates").split(",")) {
			if (!rate.isEmpty()) {
				record.rates.add(Double.parseDouble(rate));
			}
		}
		record.handOffSamples = Long.parseLong(properties.getProperty("handOff.samples"));
		record.handOffP50Nanos = Long.parseLong(properties.getProperty("handOff.p50"));
		record.handOffP99Nanos = Long.parseLong(properties.getProperty("handOff.p99"));
		record.writes = Long.parseLong(properties.getProperty("writes", "-1"));
		record.mostInside = Long.parseLong(properties.getProperty("mostInside", "-1"));
		for (String name : properties.stringPropertyNames()) {
			if (name.startsWith("cmd.")) {
				record.commands.put(name.substring("cmd.".length()), Long.parseLong(properties.getProperty(name)));
			}
			else if (name.startsWith("usec.")) {
				record.micros.put(name.substring("usec.".length()), Long.parseLong(properties.getProperty(name)));
			}
		}
		return record;
	}

}
