package io.lockstep.observation;

/**
 * The key names of the observations' tags, shared by the documentation
 * ({@link LockObservationDocumentation}) and the default convention.
 */
final class ObservationKeys {

	/** The lock's name (low cardinality). */
	static final String LOCK = "lock";

	/** How an acquisition ended (low cardinality). */
	static final String OUTCOME = "outcome";

	/** The Redis key (high cardinality: span attribute only). */
	static final String KEY = "lockstep.key";

	private ObservationKeys() {
	}

}
