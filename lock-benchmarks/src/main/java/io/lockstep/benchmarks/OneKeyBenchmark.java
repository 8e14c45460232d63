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

}
