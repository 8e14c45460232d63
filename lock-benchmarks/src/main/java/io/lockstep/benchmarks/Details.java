package io.lockstep.benchmarks;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The report's "Scenarios in detail": per scenario, every contender and client mode with
 * its rate, spread, JMH score, percentiles and Redis commands by name.
 */
final class Details {

	private Details() {
	}

	static void write(StringBuilder out, Map<String, Outcome> outcomes, RunInfo run) {
		line(out, "## Scenarios in detail");
		line(out);
		line(out, "Acquisitions/s = acquisitions ÷ wall-clock time of the measurement iterations, all threads in "
				+ "(spread = lowest–highest iteration). The summary uses it rather than JMH's score, which adds up "
				+ "per-thread rates over each thread's own measured window and overstates when a lock starves "
				+ "threads; JMH's score is shown here for reference (for S1: the mean sampled pair time). "
				+ "Acquisitions, commands and hand-offs cover the measurement iterations only. Holder changes = "
				+ "share of acquisitions that went to another thread than the previous one (S3, S4). Most inside = the "
				+ "most holders inside the key at once (RW: readers, with the share of writes among the "
				+ "operations; SEM: permit holders).");
		for (Scenario scenario : run.scenarios()) {
			line(out);
			line(out, "### " + scenario + " — " + scenario.description());
			line(out);
			Report.tableHead(out, List.of("contender", "clients", "acquisitions/s", "spread", "JMH score", "p50 / p99",
					"acquisitions", "commands / acq.", "subscribe / acq.", "holder changes", "most inside",
					"commands per acquisition, by name (a script's Redis time per call, its commands included)"));
			for (String id : run.contenders()) {
				for (String clients : scenario.clients()) {
					if (!run.clients().contains(clients)) {
						continue;
					}
					if (!scenario.runs(id)) {
						Report.tableRow(out, List.of(Contenders.of(id).title(scenario), clients, "not applicable", "",
								"", "", "", "", "", "", "", ""));
						continue;
					}
					Optional<Outcome> found = Optional.ofNullable(outcomes.get(Outcome.key(scenario, id, clients)));
					if (found.isEmpty()) {
						Report.tableRow(out, List.of(Contenders.of(id).title(scenario), clients, "failed", "", "", "",
								"", "", "", "", "", ""));
						continue;
					}
					Outcome outcome = found.get();
					Report.tableRow(out,
							List.of(Contenders.of(id).title(scenario), clients, Metric.Unit.RATE.format(outcome.rate()),
									Report.number(outcome.rateMin()) + "–" + Report.number(outcome.rateMax()),
									score(outcome), percentiles(outcome),
									(outcome.record() != null)
											? String.format(Locale.ROOT, "%,d", outcome.record().acquisitions) : "–",
									Metric.Unit.COUNT.format(outcome.commandsPerAcquisition()),
									Metric.Unit.COUNT.format(outcome.subscriptionsPerAcquisition()),
									holderChanges(outcome), mostInside(outcome), byName(outcome)));
				}
			}
		}
		line(out);
	}

	private static String score(Outcome outcome) {
		return Report.number(outcome.score()) + " " + outcome.unit().replace("us/", "µs/");
	}

	private static String percentiles(Outcome outcome) {
		if (outcome.scenario() == Scenario.S1) {
			return Metric.Unit.MICROS.format(outcome.p50()) + " / " + Metric.Unit.MICROS.format(outcome.p99());
		}
		if (outcome.scenario() == Scenario.S3 || outcome.scenario() == Scenario.S4) {
			return Metric.Unit.MICROS.format(outcome.handOffP50Micros()) + " / "
					+ Metric.Unit.MICROS.format(outcome.handOffP99Micros()) + " (hand-off)";
		}
		return "";
	}

	private static String holderChanges(Outcome outcome) {
		boolean singleKey = outcome.scenario() == Scenario.S3 || outcome.scenario() == Scenario.S4;
		if (!singleKey || outcome.record() == null || outcome.record().acquisitions == 0) {
			return "";
		}
		return String.format(Locale.ROOT, "%.0f %%",
				100.0 * outcome.record().holderChanges / outcome.record().acquisitions);
	}

	private static String mostInside(Outcome outcome) {
		TrialRecord record = outcome.record();
		if (record == null || record.mostInside < 0) {
			return "";
		}
		String text = Long.toString(record.mostInside);
		if (outcome.scenario() == Scenario.RW && record.acquisitions > 0) {
			text += String.format(Locale.ROOT, " (writes %.0f %%)", 100.0 * record.writes / record.acquisitions);
		}
		return text;
	}

	private static String byName(Outcome outcome) {
		TrialRecord record = outcome.record();
		if (record == null || record.acquisitions == 0) {
			return "–";
		}
		return record.commands.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
			.map((entry) -> String.format(Locale.ROOT, "%s %.2f", entry.getKey(),
					(double) entry.getValue() / record.acquisitions) + scriptTime(record, entry.getKey()))
			.collect(Collectors.joining(" · "));
	}

	/** A script's Redis time per call (its commands included), e.g. " (21.7 µs each)". */
	private static String scriptTime(TrialRecord record, String command) {
		double micros = record.microsPerCall(command);
		if (!command.startsWith("eval") || Double.isNaN(micros)) {
			return "";
		}
		return String.format(Locale.ROOT, " (%.1f µs each)", micros);
	}

	private static void line(StringBuilder out, String text) {
		out.append(text).append('\n');
	}

	private static void line(StringBuilder out) {
		out.append('\n');
	}

}
