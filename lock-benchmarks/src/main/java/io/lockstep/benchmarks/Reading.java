package io.lockstep.benchmarks;

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

	static void write(StringBuilder out, Map<String, Outcome> outcomes, Report.RunInfo run) {
		out.append("## Reading the numbers\n\n");
		out.append("What this run says (computed from the figures above):\n\n");
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
				+ "trip dominates. Read ratios, and only differences well beyond the spread column: with two or "
				+ "three iterations per fork, a re-run can move a contender by 10–20 %.\n");
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
				+ "\"failed\" instead of a figure.\n");
		out.append("- **Hand-off latency** is measured from the moment the holder starts its release call to the "
				+ "moment the next holder (another thread) is inside, from `System.nanoTime()` stamps in one JVM; "
				+ "it includes the release's own round trip.\n");
	}

	private static Optional<String> ranking(Map<String, Outcome> outcomes, Report.RunInfo run, Metric metric) {
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
			if (floor != null && outcome != floor && value.applyAsDouble(floor) > 0) {
				text += String.format(Locale.ROOT, " (%.2f× floor)",
						value.applyAsDouble(outcome) / value.applyAsDouble(floor));
			}
			return text;
		}).collect(Collectors.joining(", "));
		return Optional
			.of(metric.label() + ", " + (metric.higherIsBetter() ? "best first" : "lowest first") + ": " + order + ".");
	}

	private static String name(Outcome outcome) {
		return switch (Contenders.of(outcome.contender())) {
			case FLOOR -> "floor";
			case LOCKSTEP -> "**Lockstep**";
			case REDISSON -> "Redisson";
			case SI_SPIN -> "SI spin";
			case SI_PUBSUB -> "SI pub/sub";
		};
	}

}
