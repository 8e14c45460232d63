package io.lockstep.redis;

/**
 * What the engine tells about its locks; a no-op unless Micrometer observation is
 * configured.
 */
interface LockObservations {

	LockObservations NONE = new LockObservations() {
	};

	// The outcomes repeat LockObservationContext's constants on purpose: that class
	// extends a
	// Micrometer type, and the engine must load without Micrometer on the classpath.

	/** Outcome of an acquisition that got the lock. */
	String ACQUIRED = "acquired";

	/** Outcome of an acquisition that gave up because another owner held the lock. */
	String TIMEOUT = "timeout";

	/** Outcome of an acquisition that failed (Redis unreachable, bad reply). */
	String ERROR = "error";

	/** Starts observing an acquisition; returns a token for {@link #stopAcquire}. */
	default Object startAcquire(String key, String lockName) {
		return null;
	}

	/**
	 * @param outcome {@code acquired}, {@code timeout} or {@code error}
	 */
	default void stopAcquire(Object acquire, String outcome, long fencingToken, Throwable error) {
	}

	/**
	 * Starts observing a held lock; returns a token for {@link #stopHeld} and
	 * {@link #leaseLost}.
	 */
	default Object startHeld(String key, String lockName, long fencingToken) {
		return null;
	}

	default void stopHeld(Object held) {
	}

	default void leaseLost(Object held, String reason) {
	}

}
