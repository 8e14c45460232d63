package io.lockstep.benchmarks;

import java.util.List;

/**
 * The five scenarios, each a JMH benchmark class, in report order.
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
			List.of(Clients.SHARED));

	private final Class<? extends LockBenchmark> benchmark;

	private final String description;

	private final List<String> clients;

	Scenario(Class<? extends LockBenchmark> benchmark, String description, List<String> clients) {
		this.benchmark = benchmark;
		this.description = description;
		this.clients = clients;
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
