package io.lockstep.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

import io.lockstep.benchmarks.Scenario.Clients;

/**
 * One "done when" target of Step 7 (issue 11, the plain lock) or Step 13 (issue 20,
 * read/write locks and semaphores), judged on one run: with one shared client, and for
 * the one-key scenarios S3 and S4 also with a client per thread.
 *
 * @param goal the target as the issue states it, with the client mode
 * @param measured the figure it was judged on
 * @param verdict "met" or "missed"
 */
record Target(String goal, String measured, String verdict) {

	private static final List<String> PEERS = List.of(Contenders.REDISSON.id(), Contenders.SI_SPIN.id(),
			Contenders.SI_PUBSUB.id());

	private static final String FLOOR = Contenders.FLOOR.id();

	private static final String REDISSON = Contenders.REDISSON.id();

	static List<Target> evaluate(Map<String, Outcome> outcomes) {
		Judge judge = new Judge(outcomes);
		List<Target> targets = new ArrayList<>();
		judge.ratio(Scenario.S1, Clients.SHARED, Outcome::p50, FLOOR)
			.ifPresent((ratio) -> targets
				.add(new Target("S1 p50 ≤ 1.05× floor", Report.ratio(ratio) + " floor", verdict(ratio <= 1.05))));
		for (Scenario scenario : List.of(Scenario.S2, Scenario.S5)) {
			judge.ratioToBestPeer(scenario, Outcome::rate)
				.ifPresent((ratio) -> targets.add(new Target(scenario + " acquisitions/s ≥ every peer",
						Report.ratio(ratio) + " the best peer", verdict(ratio >= 1.0))));
		}
		for (String clients : List.of(Clients.SHARED, Clients.PER_THREAD)) {
			String mode = mode(clients);
			judge.ratio(Scenario.S3, clients, Outcome::rate, FLOOR)
				.ifPresent((ratio) -> targets.add(new Target("S3 hand-offs/s ≥ 1.0× floor" + mode,
						Report.ratio(ratio) + " floor", verdict(ratio >= 1.0))));
			judge.ratio(Scenario.S3, clients, Outcome::rate, REDISSON)
				.ifPresent((ratio) -> targets.add(new Target("S3 hand-offs/s ≥ 1.5× Redisson" + mode,
						Report.ratio(ratio) + " Redisson", verdict(ratio >= 1.5))));
			judge.ratio(Scenario.S3, clients, Outcome::handOffP50Micros, REDISSON)
				.ifPresent((ratio) -> targets.add(new Target("S3 hand-off p50 ≤ 0.6× Redisson's" + mode,
						Report.ratio(ratio) + " Redisson's", verdict(ratio <= 0.6))));
			judge.lockstep(Scenario.S4, clients)
				.map((outcome) -> outcome.rate() / 200)
				.filter((efficiency) -> !efficiency.isNaN())
				.ifPresent((efficiency) -> targets.add(new Target("S4 efficiency ≥ 95 %" + mode,
						Metric.Unit.PERCENT.format(efficiency), verdict(efficiency >= 0.95))));
		}
		judge.lockstep(Scenario.S1, Clients.SHARED)
			.map(Outcome::commandsPerAcquisition)
			.filter((commands) -> !commands.isNaN())
			.ifPresent((commands) -> targets.add(new Target("≤ 6 Redis commands per uncontended pair",
					String.format(Locale.ROOT, "%.2f", commands), verdict(commands <= 6.0))));
		for (String clients : List.of(Clients.SHARED, Clients.PER_THREAD)) {
			judge.lockstep(Scenario.S3, clients)
				.map(Outcome::subscriptionsPerAcquisition)
				.filter((calls) -> !calls.isNaN())
				.ifPresent((calls) -> targets
					.add(new Target("~0 SUBSCRIBE + UNSUBSCRIBE calls per contended acquisition (S3)" + mode(clients),
							String.format(Locale.ROOT, "%.2f", calls), verdict(calls <= 0.01))));
		}
		judge.ratio(Scenario.RW, Clients.SHARED, Outcome::rate, REDISSON)
			.ifPresent((ratio) -> targets.add(new Target("RW operations/s ≥ 1.5× Redisson's `RReadWriteLock`",
					Report.ratio(ratio) + " Redisson", verdict(ratio >= 1.5))));
		judge.ratio(Scenario.SEM, Clients.SHARED, Outcome::rate, REDISSON)
			.ifPresent((ratio) -> targets.add(new Target("SEM acquisitions/s ≥ 1.5× Redisson's semaphore",
					Report.ratio(ratio) + " Redisson", verdict(ratio >= 1.5))));
		return targets;
	}

	private static String mode(String clients) {
		return Clients.PER_THREAD.equals(clients) ? ", a client per thread" : ", one shared client";
	}

	private static String verdict(boolean met) {
		return met ? "met" : "**missed**";
	}

	/** Reads Lockstep's and the others' figures. */
	private record Judge(Map<String, Outcome> outcomes) {

		Optional<Outcome> lockstep(Scenario scenario, String clients) {
			return find(scenario, Contenders.LOCKSTEP.id(), clients);
		}

		Optional<Outcome> find(Scenario scenario, String contender, String clients) {
			return Optional.ofNullable(this.outcomes.get(Outcome.key(scenario, contender, clients)));
		}

		/** Lockstep's figure ÷ the other's, when both exist. */
		Optional<Double> ratio(Scenario scenario, String clients, ToDoubleFunction<Outcome> value, String other) {
			Optional<Outcome> mine = lockstep(scenario, clients);
			Optional<Outcome> theirs = find(scenario, other, clients);
			if (mine.isEmpty() || theirs.isEmpty()) {
				return Optional.empty();
			}
			double divisor = value.applyAsDouble(theirs.get());
			double ratio = value.applyAsDouble(mine.get()) / divisor;
			return (Double.isNaN(ratio) || divisor == 0) ? Optional.empty() : Optional.of(ratio);
		}

		/** Lockstep's figure ÷ the highest peer's, one shared client each. */
		Optional<Double> ratioToBestPeer(Scenario scenario, ToDoubleFunction<Outcome> value) {
			Optional<Outcome> mine = lockstep(scenario, Clients.SHARED);
			double best = PEERS.stream()
				.map((peer) -> find(scenario, peer, Clients.SHARED))
				.flatMap(Optional::stream)
				.mapToDouble(value)
				.max()
				.orElse(Double.NaN);
			if (mine.isEmpty() || Double.isNaN(best) || best == 0) {
				return Optional.empty();
			}
			return Optional.of(value.applyAsDouble(mine.get()) / best);
		}

	}

}
