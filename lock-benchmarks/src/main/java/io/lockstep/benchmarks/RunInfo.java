package io.lockstep.benchmarks;

import java.util.List;

/**
 * What the run was: its settings, the Redis it ran against, how long it took and what
 * failed.
 */
record RunInfo(List<Scenario> scenarios, List<String> contenders, List<String> clients, String warmup,
		String measurement, String redisVersion, String date, String elapsed, String loadBefore, String loadAfter,
		String commandLine, List<String> failures) {

}
