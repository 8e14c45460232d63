package io.lockstep.benchmarks;

import java.util.List;

/**
 * What the run was: its settings, the Redis it ran against, what the machine allows
 * ({@code probe}, {@code null} when not measured), how long it took and what failed.
 */
record RunInfo(List<Scenario> scenarios, List<String> contenders, List<String> clients, String warmup,
		String measurement, String redisVersion, MachineProbe probe, String date, String elapsed, String loadBefore,
		String loadAfter, String commandLine, List<String> failures) {

}
