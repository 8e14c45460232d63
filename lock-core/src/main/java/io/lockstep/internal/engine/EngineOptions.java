package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;

import io.lockstep.LockLostListener;

/**
 * How an engine is set up, as a template's options settle it
 * ({@link TemplateOptions#engine}).
 *
 * @param keyPrefix the prefix of every key of the engine's locks
 * @param maxHoldTime the hard cap on every hold, or {@code null}
 * @param onLoss who hears of a lost lease, and whether its guarded thread is interrupted
 * @param observations the acquisitions' and holds' observations
 * @param virtualThreads whether the asynchronous acquisitions' workers and the lock-lost
 * listeners run on virtual threads (JDK 21+)
 * @param waits the wait and hand-off timings
 */
record EngineOptions(String keyPrefix, Duration maxHoldTime, OnLoss onLoss, LockObservations observations,
		boolean virtualThreads, WaitPolicy waits) {

	/** The defaults under the key prefix: no cap, no listener, no observations. */
	static EngineOptions defaults(String keyPrefix) {
		return new EngineOptions(keyPrefix, null, new OnLoss(List.of(), false), new LockObservations(null, null), false,
				WaitPolicy.DEFAULTS);
	}

	EngineOptions withObservations(LockObservations observations) {
		return new EngineOptions(this.keyPrefix, this.maxHoldTime, this.onLoss, observations, this.virtualThreads,
				this.waits);
	}

	EngineOptions withWaits(WaitPolicy waits) {
		return new EngineOptions(this.keyPrefix, this.maxHoldTime, this.onLoss, this.observations, this.virtualThreads,
				waits);
	}

	/**
	 * What a lost lease does besides ending the hold.
	 *
	 * @param listeners the lock-lost listeners
	 * @param interrupt whether the thread that runs the guarded call is interrupted
	 */
	record OnLoss(List<LockLostListener> listeners, boolean interrupt) {
	}

}
