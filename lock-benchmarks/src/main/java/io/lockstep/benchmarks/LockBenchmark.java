package io.lockstep.benchmarks;

import java.util.ArrayList;
import java.util.List;
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
import org.openjdk.jmh.runner.IterationType;

/**
 * What every scenario shares: the contender under test (JMH parameter {@code contender}),
 * the Redis it runs against, the exclusion check, and the bookkeeping of measurement
 * iterations (acquisitions and the wall-clock time from the iteration's setup to its
 * teardown, Redis commands from {@code INFO commandstats}, holder changes) that ends up
 * in a {@link TrialRecord}.
 *
 * <p>
 * Why a rate of its own: JMH's throughput adds up per-thread rates, each over the time
 * that thread spent in its measured loop. When a lock starves some threads (they enter
 * the loop late, or leave it early), their short windows inflate the sum, up to figures
 * no lock could reach (above 200/s with a 5 ms critical section). Acquisitions ÷
 * wall-clock time, all threads in, cannot overstate.
 *
 * <p>
 * Each fork is one trial: it empties Redis and zeroes its statistics first, so commands
 * of another contender never count.
 */
@State(Scope.Benchmark)
public abstract class LockBenchmark {

	static final int MAX_KEYS = 1000;

	/**
	 * Which lock: {@code floor}, {@code lockstep}, {@code redisson}, {@code si-spin},
	 * {@code si-pubsub}.
	 */
	@Param({ "floor", "lockstep", "redisson", "si-spin", "si-pubsub" })
	public String contender;

	final Occupancy occupancy = new Occupancy(MAX_KEYS);

	private final LongAdder acquisitions = new LongAdder();

	private final LongAdder holderChanges = new LongAdder();

	private final List<Contender> clients = new ArrayList<>();

	private volatile int lastHolder = -1;

	private RedisTarget redis;

	private TrialRecord record;

	private RedisTarget.CommandStats commandsBefore;

	private long acquisitionsBefore;

	private long holderChangesBefore;

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
		this.record = new TrialRecord(scenario(params), this.contender, clients());
	}

	@Setup(Level.Iteration)
	public void startIteration(IterationParams iteration) {
		this.measuring = iteration.getType() == IterationType.MEASUREMENT;
		this.commandsBefore = this.redis.commandStats();
		this.acquisitionsBefore = this.acquisitions.sum();
		this.holderChangesBefore = this.holderChanges.sum();
		iterationStarted();
		this.iterationStarted = System.nanoTime();
	}

	@TearDown(Level.Iteration)
	public void endIteration() {
		if (this.measuring) {
			long nanos = System.nanoTime() - this.iterationStarted;
			this.record.add(this.commandsBefore, this.redis.commandStats(),
					this.acquisitions.sum() - this.acquisitionsBefore,
					this.holderChanges.sum() - this.holderChangesBefore, nanos);
		}
		this.measuring = false;
	}

	@TearDown(Level.Trial)
	public void endTrial() {
		try {
			trialEnded(this.record);
			this.record.writeIfRequested();
		}
		finally {
			this.clients.forEach(Contender::close);
			this.clients.clear();
			this.redis.close();
		}
	}

	/** The benchmark's class name, e.g. {@code S3HandOffBenchmark}. */
	static String scenario(BenchmarkParams params) {
		String method = params.getBenchmark();
		String type = method.substring(0, method.lastIndexOf('.'));
		return type.substring(type.lastIndexOf('.') + 1);
	}

	/** Called at the start of every iteration, warm-up included. */
	void iterationStarted() {
	}

	/** Called once the trial's last iteration ended, before the record is written. */
	void trialEnded(TrialRecord record) {
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
