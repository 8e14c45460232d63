package io.lockstep.benchmarks;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import io.lockstep.benchmarks.Scenario.Clients;

/**
 * One row of the summary: a figure taken from one scenario and client mode, how to print
 * it, and which direction is better.
 */
record Metric(String label, Scenario scenario, String clients, ToDoubleFunction<Outcome> value, Unit unit,
		boolean higherIsBetter) {

	static final List<Metric> SUMMARY = List.of(
			new Metric("S1 uncontended pair, p50", Scenario.S1, Clients.SHARED, Outcome::p50, Unit.MICROS, false),
			new Metric("S1 uncontended pair, p99", Scenario.S1, Clients.SHARED, Outcome::p99, Unit.MICROS, false),
			new Metric("S2 8 threads, 8 keys: pairs/s", Scenario.S2, Clients.SHARED, Outcome::rate, Unit.RATE, true),
			new Metric("S3 8 threads, 1 key: hand-offs/s", Scenario.S3, Clients.SHARED, Outcome::rate, Unit.RATE, true),
			new Metric("S3 hand-off p50 (release → next holder inside)", Scenario.S3, Clients.SHARED,
					Outcome::handOffP50Micros, Unit.MICROS, false),
			new Metric("S3 hand-off p99", Scenario.S3, Clients.SHARED, Outcome::handOffP99Micros, Unit.MICROS, false),
			new Metric("S3 hand-offs/s, a client per thread", Scenario.S3, Clients.PER_THREAD, Outcome::rate, Unit.RATE,
					true),
			new Metric("S3 hand-off p50, a client per thread", Scenario.S3, Clients.PER_THREAD,
					Outcome::handOffP50Micros, Unit.MICROS, false),
			new Metric("S3 hand-off p99, a client per thread", Scenario.S3, Clients.PER_THREAD,
					Outcome::handOffP99Micros, Unit.MICROS, false),
			new Metric("S4 4 threads, 1 key, 5 ms inside: efficiency", Scenario.S4, Clients.SHARED,
					(outcome) -> outcome.rate() / 200, Unit.PERCENT, true),
			new Metric("S4 efficiency, a client per thread", Scenario.S4, Clients.PER_THREAD,
					(outcome) -> outcome.rate() / 200, Unit.PERCENT, true),
			new Metric("S4 hand-off p50 (release → next holder inside, after 5 ms parked)", Scenario.S4, Clients.SHARED,
					Outcome::handOffP50Micros, Unit.MICROS, false),
			new Metric("S4 hand-off p50, a client per thread", Scenario.S4, Clients.PER_THREAD,
					Outcome::handOffP50Micros, Unit.MICROS, false),
			new Metric("S5 8 threads, 1,000 keys, 1 ms inside: acquisitions/s", Scenario.S5, Clients.SHARED,
					Outcome::rate, Unit.RATE, true),
			new Metric("RW 8 threads, 1 key, 90 % reads, 1 ms inside: operations/s", Scenario.RW, Clients.SHARED,
					Outcome::rate, Unit.RATE, true),
			new Metric("SEM 8 threads, 3 permits, 1 ms inside: acquisitions/s", Scenario.SEM, Clients.SHARED,
					Outcome::rate, Unit.RATE, true),
			new Metric("Redis commands per uncontended acquire + release (S1, incl. inside Lua)", Scenario.S1,
					Clients.SHARED, Outcome::commandsPerAcquisition, Unit.COUNT, false),
			new Metric("Redis commands per contended acquisition (S3)", Scenario.S3, Clients.SHARED,
					Outcome::commandsPerAcquisition, Unit.COUNT, false),
			new Metric("Redis commands per contended acquisition (S3, a client per thread)", Scenario.S3,
					Clients.PER_THREAD, Outcome::commandsPerAcquisition, Unit.COUNT, false),
			new Metric("SUBSCRIBE + UNSUBSCRIBE calls (all kinds) per contended acquisition (S3)", Scenario.S3,
					Clients.SHARED, Outcome::subscriptionsPerAcquisition, Unit.COUNT, false),
			new Metric("SUBSCRIBE + UNSUBSCRIBE calls (all kinds) per contended acquisition (S3, a client per thread)",
					Scenario.S3, Clients.PER_THREAD, Outcome::subscriptionsPerAcquisition, Unit.COUNT, false),
			new Metric("Redis commands per operation (RW)", Scenario.RW, Clients.SHARED,
					Outcome::commandsPerAcquisition, Unit.COUNT, false),
			new Metric("Redis commands per acquisition (SEM)", Scenario.SEM, Clients.SHARED,
					Outcome::commandsPerAcquisition, Unit.COUNT, false));

	/** How a figure is printed. */
	enum Unit {

		MICROS, RATE, PERCENT, COUNT;

		String format(double value) {
			if (Double.isNaN(value)) {
				return "–";
			}
			return switch (this) {
				case MICROS -> (value >= 100) ? String.format(Locale.ROOT, "%,.0f µs", value)
						: String.format(Locale.ROOT, "%.1f µs", value);
				case RATE -> String.format(Locale.ROOT, "%,.0f/s", value);
				case PERCENT -> String.format(Locale.ROOT, "%.0f %%", value * 100);
				case COUNT -> String.format(Locale.ROOT, "%.2f", value);
			};
		}

	}

}
