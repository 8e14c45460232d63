package io.lockstep.benchmarks;

import java.util.List;

/**
 * The scenarios, each a JMH benchmark class, in report order: S1–S5 measure the plain
 * lock and run every contender; RW and SEM measure read/write locks and semaphores and
 * run only the contenders that have them (the others are not applicable there).
 */
enum Scenario {

	S1(S1UncontendedBenchmark.class, "uncontended acquire + release pair, 1 thread, one key (JMH sample time)",
			List.of(Clients.SHARED)),

	S2(S2DistinctKeysBenchmark.class, "8 threads, a key each, empty critical section: pairs/s",
			List.of(Clients.SHARED)),

	S3(S3HandOffBenchmark.class,
			"8 threads on one key, empty critical section; a thread asks again only after another thread "
					+ "acquired: hand-offs/s, and hand-off latency = release call starts → next holder inside",
			List.of(Clients.SHARED, Clients.PER_THREAD)),

	S4(S4CriticalSectionBenchmark.class,
			"4 threads on one key, 5 ms critical section: efficiency = acquisitions/s ÷ 200",
			List.of(Clients.SHARED, Clients.PER_THREAD)),

	S5(S5ManyKeysBenchmark.class, "8 threads over 1,000 random keys, 1 ms critical section: acquisitions/s",
			List.of(Clients.SHARED)),

	RW(RwReadWriteBenchmark.class,
			"8 threads on one key, 90 % reads and 10 % writes (at random), 1 ms inside either: operations/s; "
					+ "anyone inside with a writer fails the run, and readers must overlap",
			List.of(Clients.SHARED), List.of(Contenders.LOCKSTEP, Contenders.REDISSON)),

	SEM(SemSemaphoreBenchmark.class,
			"8 threads, one semaphore of 3 permits, 1 ms inside: acquisitions/s (a perfect semaphore: 3,000/s); "
					+ "a fourth holder inside fails the run",
			List.of(Clients.SHARED), List.of(Contenders.LOCKSTEP, Contenders.REDISSON));

	private final Class<? extends LockBenchmark> benchmark;

	private final String description;

	private final List<String> clients;

	private final List<Contenders> contenders;

	Scenario(Class<? extends LockBenchmark> benchmark, String description, List<String> clients) {
		this(benchmark, description, clients, List.of(Contenders.values()));
	}

	Scenario(Class<? extends LockBenchmark> benchmark, String description, List<String> clients,
			List<Contenders> contenders) {
		this.benchmark = benchmark;
		this.description = description;
		this.clients = clients;
		this.contenders = contenders;
	}

	Class<? extends LockBenchmark> benchmark() {
		return this.benchmark;
	}

	String description() {
		return this.description;
	}

	/** The client modes this scenario runs in. */
	List<String> clients() {
		return this.clients;
	}

	/**
	 * Whether this scenario runs the contender of {@code id}: the others lack what it
	 * measures (a read/write lock, a semaphore) and are not applicable.
	 */
	boolean runs(String id) {
		return this.contenders.contains(Contenders.of(id));
	}

	/** JMH include pattern for this scenario only. */
	String include() {
		return "^" + this.benchmark.getName().replace(".", "\\.") + "\\.";
	}

	static Scenario ofBenchmark(String simpleClassName) {
		for (Scenario scenario : values()) {
			if (scenario.benchmark.getSimpleName().equals(simpleClassName)) {
				return scenario;
			}
		}
		throw new IllegalArgumentException("Not a scenario: " + simpleClassName);
	}

	/** Values of the JMH parameter {@code clients}. */
	static final class Clients {

		static final String SHARED = "shared";

		static final String PER_THREAD = "per-thread";

		private Clients() {
		}

	}

}
