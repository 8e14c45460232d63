package io.lockstep.benchmarks;

import java.util.List;

/**
 * The scenarios, each a JMH benchmark class, in the order the comparison shows them:
 * S1–S5 measure the plain lock and run every contender; RW and SEM measure read/write
 * locks and semaphores and run only the contenders that have them; MACHINE measures what
 * the machine allows, with raw Lettuce only. docs/benchmarks.md describes each.
 */
enum Scenario {

	S1(S1UncontendedBenchmark.class), S2(S2DistinctKeysBenchmark.class), S3(S3HandOffBenchmark.class),
	S4(S4CriticalSectionBenchmark.class), S5(S5ManyKeysBenchmark.class),
	RW(RwReadWriteBenchmark.class, Contenders.LOCKSTEP, Contenders.REDISSON),
	SEM(SemSemaphoreBenchmark.class, Contenders.LOCKSTEP, Contenders.REDISSON), MACHINE(MachineBenchmark.class);

	private final Class<?> benchmark;

	private final List<Contenders> contenders;

	Scenario(Class<?> benchmark, Contenders... contenders) {
		this.benchmark = benchmark;
		this.contenders = (contenders.length > 0) ? List.of(contenders) : List.of(Contenders.values());
	}

	/**
	 * Whether this scenario runs the contender of {@code id}: the others lack what it
	 * measures (a read/write lock, a semaphore) and are not applicable.
	 */
	boolean runs(String id) {
		return this.contenders.contains(Contenders.of(id));
	}

	/**
	 * Whether it runs once per client mode (its JMH parameter {@code clients}), else
	 * shared.
	 */
	boolean hasClientModes() {
		try {
			this.benchmark.getField("clients");
			return true;
		}
		catch (NoSuchFieldException ex) {
			return false;
		}
	}

	/** Whether it measures contenders ({@link LockBenchmark}): all but MACHINE. */
	boolean measuresContenders() {
		return LockBenchmark.class.isAssignableFrom(this.benchmark);
	}

	/** JMH include pattern for this scenario only. */
	String include() {
		return "^" + this.benchmark.getName().replace(".", "\\.") + "\\.";
	}

	/** The scenario of a JMH benchmark name (class and method), or {@code null}. */
	static Scenario ofBenchmark(String benchmark) {
		for (Scenario scenario : values()) {
			if (benchmark.startsWith(scenario.benchmark.getName() + ".")) {
				return scenario;
			}
		}
		return null;
	}

}
