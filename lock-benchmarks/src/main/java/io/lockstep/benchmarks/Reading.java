package io.lockstep.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The "Reading the numbers" section: what this run's figures say (computed from them) and
 * what they cannot say (the same every run).
 */
final class Reading {

	private Reading() {
	}

	static void write(StringBuilder out, Map<String, Outcome> outcomes, RunInfo run) {
		out.append("## Reading the numbers\n\n");
		headline(out, outcomes, run);
		out.append("Each summary figure, ranked:\n\n");
		for (Metric metric : Metric.SUMMARY) {
			if (metric.label().contains("p99")) {
				continue;
			}
			ranking(outcomes, run, metric).ifPresent((text) -> out.append("- ").append(text).append('\n'));
		}
		out.append("\nWhat it cannot say:\n\n");
		out.append("- **A noisy 2-core machine.** Redis, the benchmark threads, every client's I/O threads and "
				+ "whatever else runs there (other builds, test suites) share two cores; the load average above "
				+ "tells how busy it was. Absolute figures are far from a real deployment, where a network round "
				+ "trip dominates. Read ratios, and only differences well beyond the spread column (which shows "
				+ "how much a fork's own iterations differed; a re-run on a busy machine can differ by more).\n");
		out.append("- **Forks run one after another**, so a change of load between forks favours one contender "
				+ "over another; nothing here is interleaved or repeated.\n");
		out.append("- **Spring Integration queues locally.** `RedisLockRegistry` keeps a JVM-local "
				+ "`ReentrantLock` per key: with one shared registry, waiters of the same JVM wait on that lock "
				+ "and only one thread at a time talks to Redis, so spin and pub/sub modes barely differ and "
				+ "in-JVM contention is cheap. With a client per thread they act as separate instances, where "
				+ "spin mode sleeps 100 ms between tries. With its defaults it also renews nothing (60 s expiry) "
				+ "and issues no fencing token: less work per acquisition than the watchdog locks do.\n");
		out.append("- **The floor does none of a real lock's work** (fencing, renewal, notification, "
				+ "reentrancy, ownership checks beyond compare-and-delete); it marks what the Redis round trips "
				+ "alone cost here. Busy-spinning waiters flood Redis under contention, which costs the holder's "
				+ "release too: a lock that waits better can beat it in the contended scenarios.\n");
		out.append("- **Exclusion held** for every figure shown: an overlap throws inside the fork and leaves "
				+ "\"failed\" instead of a figure. In RW that is anyone inside together with a writer (0 such "
				+ "overlaps), and a fork whose readers never overlapped fails too; in SEM, a fourth holder inside. "
				+ "The most holders inside at once is in the RW and SEM details.\n");
		out.append("- **RW and SEM compare Lockstep with Redisson only**: the floor and Spring Integration have no "
				+ "read/write lock or semaphore (n/a). Redisson's semaphore here is `RPermitExpirableSemaphore` "
				+ "with a " + RedissonContender.PERMIT_LEASE_SECONDS + " s lease per permit, not `RSemaphore`: "
				+ "like a Lockstep permit holder's share, an expirable permit whose holder crashed comes back when "
				+ "its lease ends, while an `RSemaphore` permit has no lease and is lost for good (a cheaper "
				+ "semaphore, but not the same guarantee). Redisson renews no permit (Lockstep's watchdog renews "
				+ "each holder's lease); with 1 ms holds neither renews anything here.\n");
		out.append("- **Hand-off latency** is measured from the moment the holder starts its release call to the "
				+ "moment the next holder (another thread) is inside, from `System.nanoTime()` stamps in one JVM; "
				+ "it includes the release's own round trip.\n");
	}

	/**
	 * A few sentences computed from the run: where Lockstep stands, and how noisy it was.
	 */
	private static void headline(StringBuilder out, Map<String, Outcome> outcomes, RunInfo run) {
		int cores = Runtime.getRuntime().availableProcessors();
		double busiest = Math.max(parse(run.loadBefore()), parse(run.loadAfter()));
		out.append("In short (computed from this run):\n\n");
		if (busiest > cores) {
			out.append("- The machine was busy: load average ")
				.append(run.loadBefore())
				.append(" when the run started and ")
				.append(run.loadAfter())
				.append(" when it ended, on ")
				.append(cores)
				.append(" cores, so other work shared them with Redis and the benchmark.\n");
		}
		widestSpread(outcomes).ifPresent((text) -> out.append("- ").append(text).append('\n'));
		for (Metric metric : Metric.SUMMARY) {
			boolean headline = metric.label().startsWith("S1 uncontended pair, p50")
					|| metric.label().startsWith("S3 8 threads") || metric.label().startsWith("S3 hand-offs/s")
					|| metric.label().startsWith("Redis commands per uncontended") || metric.label().startsWith("RW ")
					|| metric.label().startsWith("SEM ");
			if (headline) {
				place(outcomes, run, metric).ifPresent((text) -> out.append("- ").append(text).append('\n'));
			}
		}
		long met = Target.evaluate(outcomes).stream().filter((target) -> target.verdict().equals("met")).count();
		int all = Target.evaluate(outcomes).size();
		if (all > 0) {
			out.append("- Targets (Steps 7 and 13) met in this run: ")
				.append(met)
				.append(" of ")
				.append(all)
				.append(".\n");
		}
		out.append('\n');
	}

	/** "Lockstep: its figure, its ratio to each other contender, and its place." */
	private static Optional<String> place(Map<String, Outcome> outcomes, RunInfo run, Metric metric) {
		if (!run.scenarios().contains(metric.scenario()) || !run.clients().contains(metric.clients())) {
			return Optional.empty();
		}
		Outcome lockstep = outcomes.get(Outcome.key(metric.scenario(), Contenders.LOCKSTEP.id(), metric.clients()));
		if (lockstep == null || Double.isNaN(metric.value().applyAsDouble(lockstep))) {
			return Optional.empty();
		}
		double mine = metric.value().applyAsDouble(lockstep);
		StringBuilder text = new StringBuilder(metric.label()).append(": **Lockstep** ")
			.append(metric.unit().format(mine));
		int place = 1;
		int count = 1;
		List<String> ratios = new ArrayList<>();
		for (String id : run.contenders()) {
			Outcome other = outcomes.get(Outcome.key(metric.scenario(), id, metric.clients()));
			if (id.equals(Contenders.LOCKSTEP.id()) || other == null
					|| Double.isNaN(metric.value().applyAsDouble(other))) {
				continue;
			}
			double theirs = metric.value().applyAsDouble(other);
			count++;
			if (metric.higherIsBetter() ? theirs > mine : theirs < mine) {
				place++;
			}
			if (Report.comparable(mine, theirs)) {
				ratios.add(String.format(Locale.ROOT, "%.2f× %s", mine / theirs, plainName(id)));
			}
		}
		if (!ratios.isEmpty()) {
			text.append(" = ").append(String.join(", ", ratios));
		}
		text.append("; place ")
			.append(place)
			.append(" of ")
			.append(count)
			.append(" (")
			.append(metric.higherIsBetter() ? "higher" : "lower")
			.append(" is better).");
		return Optional.of(text.toString());
	}

	/** The widest iteration-to-iteration spread of a rate in this run, as a warning. */
	private static Optional<String> widestSpread(Map<String, Outcome> outcomes) {
		return outcomes.values()
			.stream()
			.filter((outcome) -> !Double.isNaN(outcome.rateMin()) && outcome.rate() > 0)
			.max(Comparator.comparingDouble((outcome) -> (outcome.rateMax() - outcome.rateMin()) / outcome.rate()))
			.map((outcome) -> String.format(Locale.ROOT,
					"Within one fork, iterations differed by up to %.0f %% of their mean (%s, %s, %s): "
							+ "differences smaller than that between contenders are not findings.",
					100 * (outcome.rateMax() - outcome.rateMin()) / outcome.rate(), outcome.scenario(),
					plainName(outcome.contender()), outcome.clients()));
	}

	private static double parse(String load) {
		try {
			return Double.parseDouble(load);
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	private static String plainName(String id) {
		return switch (Contenders.of(id)) {
			case FLOOR -> "floor";
			case LOCKSTEP -> "Lockstep";
			case REDISSON -> "Redisson";
			case SI_SPIN -> "SI spin";
			case SI_PUBSUB -> "SI pub/sub";
		};
	}

	private static Optional<String> ranking(Map<String, Outcome> outcomes, RunInfo run, Metric metric) {
		if (!run.scenarios().contains(metric.scenario()) || !run.clients().contains(metric.clients())) {
			return Optional.empty();
		}
		ToDoubleFunction<Outcome> value = metric.value();
		List<Outcome> found = run.contenders()
			.stream()
			.map((id) -> outcomes.get(Outcome.key(metric.scenario(), id, metric.clients())))
			.filter((outcome) -> outcome != null && !Double.isNaN(value.applyAsDouble(outcome)))
			.sorted(Comparator.comparingDouble(value))
			.collect(Collectors.toList());
		if (found.size() < 2) {
			return Optional.empty();
		}
		if (metric.higherIsBetter()) {
			Collections.reverse(found);
		}
		Outcome floor = outcomes.get(Outcome.key(metric.scenario(), Contenders.FLOOR.id(), metric.clients()));
		String order = found.stream().map((outcome) -> {
			String text = name(outcome) + " " + metric.unit().format(value.applyAsDouble(outcome));
			if (floor != null && outcome != floor
					&& Report.comparable(value.applyAsDouble(outcome), value.applyAsDouble(floor))) {
				text += String.format(Locale.ROOT, " (%.2f× floor)",
						value.applyAsDouble(outcome) / value.applyAsDouble(floor));
			}
			return text;
		}).collect(Collectors.joining(", "));
		return Optional
			.of(metric.label() + ", " + (metric.higherIsBetter() ? "best first" : "lowest first") + ": " + order + ".");
	}

	private static String name(Outcome outcome) {
		String name = plainName(outcome.contender());
		return Contenders.LOCKSTEP.id().equals(outcome.contender()) ? "**" + name + "**" : name;
	}

}
