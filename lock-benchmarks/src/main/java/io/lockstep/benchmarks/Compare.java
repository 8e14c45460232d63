package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Reads JMH JSON result files ({@code -rf json}) and prints them side by side as
 * Markdown: one run as a table of contenders, each figure with its ratio to the floor's
 * in the same run; several runs (e.g. before and after a change, run interleaved) as a
 * table per contender with a column per run, in the order given, and the median of each
 * label over its runs that have the figure (of their ratios to the floor where each has
 * one, else of the figures). Rows, in scenario order: a sample-time score's p50 and p99,
 * and the secondary results listed in {@link #SHOWN} (of {@code hand-off}, a sample, its
 * p50 and p99). A benchmark without a contender (MACHINE: raw Lettuce, the floor's
 * client) counts as the floor. Usage: {@code Compare [label=]result.json ...}
 */
public final class Compare {

	/** The secondary results shown, in this order; the JSON keeps every other one. */
	static final List<String> SHOWN = List.of("acquisitions/s", "efficiency", "hand-off", "holder changes",
			"commands/acq", "subscribes/acq", "redis time/script", "jvm cpu/acq", "jvm alloc/acq", "redis cpu/acq",
			"most inside", "writes");

	private static final String FLOOR = "floor";

	private Compare() {
	}

	public static void main(String[] args) throws IOException {
		if (args.length == 0) {
			System.out
				.println("Usage: Compare [label=]result.json ...  (JMH JSON results, e.g. before=a.json after=b.json)");
			return;
		}
		List<Run> runs = new ArrayList<>();
		for (String arg : args) {
			int equals = arg.indexOf('=');
			Path file = Path.of(arg.substring(equals + 1));
			runs.add(read((equals > 0) ? arg.substring(0, equals) : file.getFileName().toString().replace(".json", ""),
					file));
		}
		System.out.print(render(runs));
	}

	/** One result file: figure by row, then by contender. */
	record Run(String label, Map<String, Map<String, Double>> rows) {
	}

	static Run read(String label, Path file) throws IOException {
		List<JsonNode> results = new ArrayList<>();
		new ObjectMapper().readTree(file.toFile()).forEach(results::add);
		results.sort(Comparator.comparingInt((result) -> {
			Scenario scenario = Scenario.ofBenchmark(result.path("benchmark").asText());
			return (scenario != null) ? scenario.ordinal() : Integer.MAX_VALUE;
		}));
		Map<String, Map<String, Double>> rows = new LinkedHashMap<>();
		for (JsonNode result : results) {
			String benchmark = result.path("benchmark").asText();
			String type = benchmark.substring(0, benchmark.lastIndexOf('.'));
			Scenario scenario = Scenario.ofBenchmark(benchmark);
			JsonNode params = result.path("params");
			String prefix = ((scenario != null) ? scenario.name() : type.substring(type.lastIndexOf('.') + 1)) + " "
					+ benchmark.substring(type.length() + 1)
					+ (params.has("clients") ? " (" + params.path("clients").asText() + ")" : "") + " · ";
			String contender = params.path("contender").asText(FLOOR);
			if (result.path("mode").asText().equals("sample")) {
				add(rows, prefix, "", result.path("primaryMetric"), true, contender);
			}
			for (String name : SHOWN) {
				JsonNode metric = result.path("secondaryMetrics").path(name);
				if (!metric.isMissingNode()) {
					add(rows, prefix, name, metric, name.equals("hand-off"), contender);
				}
			}
		}
		return new Run(label, rows);
	}

	/** A metric's figure, or for samples ({@code sampled}) its p50 and p99. */
	private static void add(Map<String, Map<String, Double>> rows, String prefix, String name, JsonNode metric,
			boolean sampled, String contender) {
		String unit = switch (metric.path("scoreUnit").asText()) {
			case "us/op", "us" -> "µs";
			case "#", "ops/s" -> "";
			default -> metric.path("scoreUnit").asText();
		};
		String label = prefix + name + (name.isEmpty() ? "" : " ");
		if (sampled) {
			put(rows, label + "p50 " + unit, contender, metric.path("scorePercentiles").path("50.0").asDouble());
			put(rows, label + "p99 " + unit, contender, metric.path("scorePercentiles").path("99.0").asDouble());
		}
		else {
			put(rows, label + unit, contender, metric.path("score").asDouble());
		}
	}

	private static void put(Map<String, Map<String, Double>> rows, String row, String contender, double value) {
		rows.computeIfAbsent(row.trim(), (key) -> new LinkedHashMap<>()).put(contender, value);
	}

	static String render(List<Run> runs) {
		Set<String> rows = new LinkedHashSet<>();
		Set<String> found = new LinkedHashSet<>();
		runs.forEach((run) -> rows.addAll(run.rows.keySet()));
		runs.forEach((run) -> run.rows.values().forEach((figures) -> found.addAll(figures.keySet())));
		List<String> order = Contenders.ids();
		List<String> contenders = found.stream()
			.sorted(Comparator.comparingInt((id) -> order.contains(id) ? order.indexOf(id) : order.size()))
			.toList();
		StringBuilder out = new StringBuilder();
		if (runs.size() == 1) {
			Run run = runs.get(0);
			out.append("Each figure with its ratio to the floor's.\n\n");
			line(out, "", contenders);
			rows.forEach((row) -> line(out, row, contenders.stream().map((id) -> cell(run, row, id)).toList()));
			return out.toString();
		}
		List<String> labels = runs.stream().map(Run::label).distinct().toList();
		out.append("Each figure with its ratio to the floor's in the same run; median per label over the runs "
				+ "with the figure: of their ratios where each has one, else of the figures.\n");
		for (String id : contenders) {
			List<String> head = new ArrayList<>(runs.stream().map(Run::label).toList());
			labels.forEach((label) -> head.add("median " + label));
			out.append("\n### ").append(id).append("\n\n");
			line(out, "", head);
			for (String row : rows) {
				List<String> cells = new ArrayList<>(runs.stream().map((run) -> cell(run, row, id)).toList());
				for (String label : labels) {
					List<Run> of = runs.stream()
						.filter((run) -> run.label.equals(label) && !Double.isNaN(value(run, row, id)))
						.toList();
					boolean ratios = of.stream().allMatch((run) -> !Double.isNaN(ratio(run, row, id)));
					double[] values = of.stream()
						.mapToDouble((run) -> ratios ? ratio(run, row, id) : value(run, row, id))
						.sorted()
						.toArray();
					cells.add((values.length == 0) ? "–" : ratios ? ratio(median(values)) : number(median(values)));
				}
				line(out, row, cells);
			}
		}
		return out.toString();
	}

	private static String cell(Run run, String row, String id) {
		double value = value(run, row, id);
		double ratio = ratio(run, row, id);
		return Double.isNaN(value) ? "–" : number(value) + (Double.isNaN(ratio) ? "" : " (" + ratio(ratio) + ")");
	}

	private static double value(Run run, String row, String id) {
		return run.rows.getOrDefault(row, Map.of()).getOrDefault(id, Double.NaN);
	}

	/** The figure ÷ the floor's, or NaN for the floor, without one, or near 0. */
	private static double ratio(Run run, String row, String id) {
		double floor = value(run, row, FLOOR);
		return (id.equals(FLOOR) || !(Math.abs(floor) >= 0.005)) ? Double.NaN : value(run, row, id) / floor;
	}

	private static double median(double[] sorted) {
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

	static String number(double value) {
		String format = (Math.abs(value) >= 100) ? "%,.0f" : (Math.abs(value) >= 10) ? "%.1f" : "%.2f";
		return String.format(Locale.ROOT, format, value);
	}

	private static String ratio(double value) {
		return String.format(Locale.ROOT, "%.2f×", value);
	}

	private static void line(StringBuilder out, String first, List<String> cells) {
		out.append("| ").append(first).append(" | ").append(String.join(" | ", cells)).append(" |\n");
		if (first.isEmpty()) {
			out.append("|---".repeat(cells.size() + 1)).append("|\n");
		}
	}

}
