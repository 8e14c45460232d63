package io.lockstep.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.infra.ThreadParams;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;
import org.openjdk.jmh.runner.IterationType;

/**
 * What every scenario shares: the contender under test (JMH parameter {@code contender}),
 * the Redis it runs against, the exclusion check, and what each measurement iteration
 * counted, handed to JMH as secondary results through {@link LockProfiler}.
 *
 * <p>
 * Why a rate of its own ({@code acquisitions/s}): JMH's throughput adds up per-thread
 * rates, each over the time that thread spent in its measured loop. When a lock starves
 * some threads (they enter the loop late, or leave it early), their short windows inflate
 * the sum, up to figures no lock could reach (above 200/s with a 5 ms critical section).
 * Acquisitions ÷ wall-clock time from the iteration's setup to its teardown, all threads
 * in, cannot overstate.
 *
 * <p>
 * Each fork is one trial: it empties Redis and zeroes its statistics first, so commands
 * of another contender never count.
 */
@State(Scope.Benchmark)
public abstract class LockBenchmark {

	static final int MAX_KEYS = 1000;

	/**
	 * Which lock: {@code floor}, {@code parked}, {@code lockstep}, {@code redisson},
	 * {@code si-spin}, {@code si-pubsub}; also {@code lockstep-try-first} when named (see
	 * {@link Contenders}).
	 */
	@Param({ "floor", "parked", "lockstep", "redisson", "si-spin", "si-pubsub" })
	public String contender;

	final Occupancy occupancy = new Occupancy(MAX_KEYS);

	final LongAdder acquisitions = new LongAdder();

	final LongAdder holderChanges = new LongAdder();

	private final List<Contender> clients = new ArrayList<>();

	private volatile int lastHolder = -1;

	private RedisTarget redis;

	private RedisTarget.Stats statsBefore;

	private long cpuBefore;

	private long allocatedBefore;

	private long iterationStarted;

	volatile boolean measuring;

	/**
	 * {@code "shared"}: one client for all threads (one application instance);
	 * {@code "per-thread"}: one client per thread (as many instances as threads).
	 */
	String clients() {
		return "shared";
	}

	@Setup(Level.Trial)
	public void startTrial(BenchmarkParams params) {
		this.redis = RedisTarget.locate();
		this.redis.reset();
		Contenders which = Contenders.of(this.contender);
		int count = "per-thread".equals(clients()) ? params.getThreads() : 1;
		for (int i = 0; i < count; i++) {
			this.clients.add(which.create(this.redis));
		}
	}

	@Setup(Level.Iteration)
	public void startIteration(IterationParams iteration) {
		this.measuring = iteration.getType() == IterationType.MEASUREMENT;
		this.statsBefore = this.redis.stats();
		this.cpuBefore = processCpuNanos();
		this.allocatedBefore = allocatedBytes();
		this.acquisitions.reset();
		this.holderChanges.reset();
		iterationStarted();
		this.iterationStarted = System.nanoTime();
	}

	/**
	 * Hands what a measurement iteration counted to {@link LockProfiler}: acquisitions
	 * and their rate by wall clock, Redis calls by command (summed over the iterations),
	 * commands, (un)subscriptions and CPU time (this JVM's, compilation and GC included,
	 * and Redis's) per acquisition, the bytes this JVM's threads allocated per
	 * acquisition (callers and client I/O threads; a thread that ended during the
	 * iteration is not counted), and Redis time per script call, its commands included.
	 */
	@TearDown(Level.Iteration)
	public void endIteration() {
		if (this.measuring) {
			long nanos = System.nanoTime() - this.iterationStarted;
			long cpu = processCpuNanos() - this.cpuBefore;
			long allocated = allocatedBytes() - this.allocatedBefore;
			RedisTarget.Stats after = this.redis.stats();
			long acquisitions = this.acquisitions.sum();
			List<Result<?>> results = new ArrayList<>();
			results.add(new ScalarResult("acquisitions/s", acquisitions * 1e9 / nanos, "ops/s", AggregationPolicy.AVG));
			results.add(new ScalarResult("acquisitions", acquisitions, "#", AggregationPolicy.SUM));
			Map<String, Long> calls = after.callsSince(this.statsBefore);
			calls.forEach(
					(name, count) -> results.add(new ScalarResult("calls " + name, count, "#", AggregationPolicy.SUM)));
			long scripts = calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
			if (scripts > 0) {
				double micros = after.microsSince(this.statsBefore, "evalsha")
						+ after.microsSince(this.statsBefore, "eval");
				results.add(new ScalarResult("redis time/script", micros / scripts, "us", AggregationPolicy.AVG));
			}
			if (acquisitions > 0) {
				long commands = calls.values().stream().mapToLong(Long::longValue).sum();
				long subscriptions = calls.entrySet()
					.stream()
					.filter((entry) -> entry.getKey().endsWith("subscribe"))
					.mapToLong(Map.Entry::getValue)
					.sum();
				results.add(perAcquisition("commands/acq", commands, "#"));
				results.add(perAcquisition("subscribes/acq", subscriptions, "#"));
				results.add(perAcquisition("jvm cpu/acq", cpu / 1000.0, "us"));
				results.add(perAcquisition("jvm alloc/acq", allocated, "B"));
				results.add(perAcquisition("redis cpu/acq", (after.cpuSeconds() - this.statsBefore.cpuSeconds()) * 1e6,
						"us"));
			}
			iterationEnded(results, acquisitions, nanos);
			LockProfiler.publish(results);
		}
		this.measuring = false;
	}

	@TearDown(Level.Trial)
	public void endTrial() {
		try {
			trialEnded();
		}
		finally {
			this.clients.forEach(Contender::close);
			this.clients.clear();
			this.redis.close();
		}
	}

	/** Called at the start of every iteration, warm-up included. */
	void iterationStarted() {
	}

	/**
	 * Called at the end of every measurement iteration: add what this scenario counts
	 * beyond the common figures.
	 */
	void iterationEnded(List<Result<?>> results, long acquisitions, long nanos) {
	}

	/** Called once the trial's last iteration ended; may fail the trial. */
	void trialEnded() {
	}

	/** The client the thread of {@code slot} uses. */
	Contender client(Slot slot) {
		return this.clients.get((this.clients.size() == 1) ? 0 : slot.index);
	}

	/**
	 * One acquire, {@code nanos} inside, release, by the thread of {@code slot}; fails on
	 * an overlap.
	 */
	void lockOnce(Slot slot, String key, int keyIndex, long nanos) {
		CriticalSection.run(client(slot), key, this.occupancy, keyIndex, nanos, () -> acquired(slot));
	}

	/**
	 * Counts one acquisition; call inside the critical section. {@code slot} changes
	 * holder of a single-key scenario when it is not the previous holder.
	 */
	void acquired(Slot slot) {
		this.acquisitions.increment();
		if (this.lastHolder != slot.index) {
			this.lastHolder = slot.index;
			this.holderChanges.increment();
		}
	}

	/**
	 * {@code total ÷ acquisitions} of the iteration just ended, averaged over iterations.
	 */
	ScalarResult perAcquisition(String label, double total, String unit) {
		return new ScalarResult(label, total / this.acquisitions.sum(), unit, AggregationPolicy.AVG);
	}

	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	/**
	 * Bytes allocated so far by the JVM's live threads (HotSpot's per-thread counters,
	 * which JMH's own {@code -prof gc} reads too).
	 */
	private static long allocatedBytes() {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long total = 0;
		for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
			total += Math.max(bytes, 0);
		}
		return total;
	}

	/** One benchmark thread: its index, and state a scenario keeps per thread. */
	@State(Scope.Thread)
	public static class Slot {

		int index;

		long lastTurn = -1;

		@Setup(Level.Trial)
		public void setUp(ThreadParams thread) {
			this.index = thread.getThreadIndex();
		}

	}

}
