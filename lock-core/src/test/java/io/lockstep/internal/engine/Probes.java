package io.lockstep.internal.engine;

import io.lockstep.LockTemplate;

/**
 * Tests' way into the engine behind a template of Lockstep's (its registry, waiters,
 * store and wake-up channel), which the public templates do not expose.
 */
public final class Probes {

	private Probes() {
	}

	/** The engine shared by the template and its copies. */
	public static LockEngine engine(LockTemplate template) {
		EngineTemplate locks = EngineTemplate.of(template);
		if (locks == null) {
			throw new IllegalArgumentException("Not a template of Lockstep's: " + template.getClass().getName());
		}
		return locks.engine();
	}

	/**
	 * The longest lease a hand-off grants a waiter whose lease is renewed, in ms, as
	 * every template's engine (and a worker JVM's) runs it: the default timings.
	 */
	public static long handOffGrantMillis() {
		return WaitPolicy.DEFAULTS.handOffGrant().toMillis();
	}

}
