package io.lockstep.benchmarks;

import org.openjdk.jmh.annotations.Param;

/**
 * A scenario of many threads on one key, with one client for all of them or one each,
 * that measures hand-off latency ({@link HandOffs}).
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
	void trialEnded(TrialRecord record) {
		this.handOffs.report(record);
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
