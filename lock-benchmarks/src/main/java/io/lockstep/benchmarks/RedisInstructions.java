package io.lockstep.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Redis's own instructions per uncontended pair (acquire, release), contender by
 * contender: a count that does not move with the machine's load, where Redis's time per
 * script does by more than the differences between the contenders' scripts. Redis runs
 * under valgrind's callgrind ({@code redis-instructions.sh} starts it), collecting
 * nothing until told; for each contender one thread acquires and releases {@code pairs}
 * times, cycling over eight keys, after as many pairs unmeasured, and callgrind counts
 * Redis's user-space instructions in between ({@code callgrind_control}). The count
 * includes Redis's reading and answering of each command, not the kernel's share, and the
 * few timer events that fall into the window.
 * <p>
 * Arguments: {@code <port> <callgrind pid> <callgrind output file> <pairs>
 * <contender,...>}.
 */
public final class RedisInstructions {

	private RedisInstructions() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		String pid = args[1];
		Path output = Path.of(args[2]);
		int pairs = Integer.parseInt(args[3]);
		List<String> contenders = List.of(args[4].split(","));
		List<String> rows = new ArrayList<>();
		double floor = Double.NaN;
		try (RedisTarget redis = new RedisTarget("127.0.0.1", port)) {
			for (String id : contenders) {
				long instructions;
				try (Contender contender = Contenders.of(id).create(redis)) {
					run(contender, pairs);
					callgrind(pid, "-z");
					callgrind(pid, "-i", "on");
					run(contender, pairs);
					callgrind(pid, "-i", "off");
					callgrind(pid, "-d");
					instructions = totalOfLastDump(output);
				}
				double perPair = (double) instructions / pairs;
				if (id.equals("floor")) {
					floor = perPair;
				}
				rows.add(String.format(Locale.ROOT, "| %s | %,.0f | %s |", id, perPair,
						Double.isNaN(floor) ? "" : String.format(Locale.ROOT, "%.2f×", perPair / floor)));
			}
		}
		System.out.printf("Redis instructions per uncontended pair (callgrind, %,d pairs each, one thread)%n%n", pairs);
		System.out.println("| contender | instructions/pair | ÷ floor |");
		System.out.println("|---|---|---|");
		rows.forEach(System.out::println);
	}

	private static void run(Contender contender, int pairs) {
		for (int i = 0; i < pairs; i++) {
			contender.acquire("instructions-" + (i % 8)).release();
		}
	}

	private static void callgrind(String pid, String... what) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("callgrind_control"));
		command.addAll(List.of(what));
		command.add(pid);
		Process process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		if (process.waitFor() != 0) {
			throw new IllegalStateException("callgrind_control " + String.join(" ", what) + " failed");
		}
	}

	/**
	 * The {@code totals:} line of the newest dump next to {@code output} (its prefix).
	 */
	private static long totalOfLastDump(Path output) throws IOException {
		Path dir = output.toAbsolutePath().getParent();
		String prefix = output.getFileName().toString();
		Path last;
		try (Stream<Path> files = Files.list(dir)) {
			last = files.filter((file) -> file.getFileName().toString().startsWith(prefix + "."))
				.max(Comparator.comparingLong(RedisInstructions::modified))
				.orElseThrow(() -> new IllegalStateException("No callgrind dump next to " + output));
		}
		try (Stream<String> lines = Files.lines(last)) {
			return lines.filter((line) -> line.startsWith("totals:"))
				.map((line) -> Long.parseLong(line.substring("totals:".length()).trim()))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("No totals in " + last));
		}
	}

	private static long modified(Path file) {
		try {
			return Files.getLastModifiedTime(file).toMillis();
		}
		catch (IOException ex) {
			return 0;
		}
	}

}
