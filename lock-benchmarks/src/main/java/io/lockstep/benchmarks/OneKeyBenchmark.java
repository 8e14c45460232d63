package io.lockstep.benchmarks;

import java.util.List;

import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * A scenario of many threads on one key, with one client for all of them or one each,
 * that measures hand-off latency ({@link HandOffs}) and the share of acquisitions that
 * went to another thread than the previous holder ({@code holder changes}).
 */
public abstract class OneKeyBenchmark extends LockBenchmark {

	/** One client for all threads, or one per thread. */
	@Param({ "shared", "per-thread" })
	public String clients;

	final HandOffs handOffs = new HandOffs(1 << 21);

	@Override
	String clients() {
		return this.clients;
	}

	@Override
	void iterationStarted() {
		this.handOffs.reset();
	}

	@Override
	void iterationEnded(List<Result<?>> results, long acquisitions, long nanos) {
		results.add(this.handOffs.result());
		if (acquisitions > 0) {
			results.add(new ScalarResult("holder changes", 100.0 * this.holderChanges.sum() / acquisitions, "%",
					AggregationPolicy.AVG));
		}
	}

	/**
	 * Acquires {@code key}, counts the acquisition and its hand-off, runs {@code inside}
	 * while the lock is held (checking exclusion) and releases.
	 */
	final void holdOnce(Slot slot, String key, Runnable inside) {
		Contender.Held held = client(slot).acquire(key);
		try {
			long entered = System.nanoTime();
			this.occupancy.enter(0);
			try {
				this.handOffs.entered(slot.index, entered, this.measuring);
				acquired(slot);
				inside.run();
			}
			finally {
				this.occupancy.exit(0);
				this.handOffs.releasing();
			}
		}
		finally {
			held.release();
		}
	}

}
