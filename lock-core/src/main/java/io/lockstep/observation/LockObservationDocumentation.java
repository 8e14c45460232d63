package io.lockstep.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations Lockstep makes. With Micrometer's meter handler they become the timers
 * {@code lockstep.acquire} and {@code lockstep.held}; with a tracer, spans.
 */
public enum LockObservationDocumentation implements ObservationDocumentation {

	/** Waiting for and acquiring a lock; tags {@code lock} and {@code outcome}. */
	ACQUIRE {
		@Override
		public String getName() {
			return "lockstep.acquire";
		}

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeys.values();
		}
	},

	/**
	 * Holding a lock, from acquisition to release; tag {@code lock}; events
	 * {@code lease.lost} when the lease is lost, {@code release.failed} and
	 * {@code precommit.failed}.
	 */
	HELD {
		@Override
		public String getName() {
			return "lockstep.held";
		}

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeys.LOCK };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeys.values();
		}

		@Override
		public Observation.Event[] getEvents() {
			return Events.values();
		}
	};

	/** Low-cardinality tags (meters and spans). */
	public enum LowCardinalityKeys implements KeyName {

		/** The lock name, never the evaluated key. */
		LOCK {
			@Override
			public String asString() {
				return ObservationKeys.LOCK;
			}
		},

		/**
		 * {@code acquired}, {@code timeout}, {@code skipped}, {@code error} or
		 * {@code cancelled}.
		 */
		OUTCOME {
			@Override
			public String asString() {
				return ObservationKeys.OUTCOME;
			}
		}

	}

	/** High-cardinality values (spans only). */
	public enum HighCardinalityKeys implements KeyName {

		/** The Redis key. */
		KEY {
			@Override
			public String asString() {
				return ObservationKeys.KEY;
			}
		}

	}

	/** Events of a held lock. */
	public enum Events implements Observation.Event {

		/** The lease was lost while held. */
		LEASE_LOST {
			@Override
			public String getName() {
				return "lease.lost";
			}

			@Override
			public String getContextualName() {
				return "lease lost";
			}
		},

		/**
		 * Releasing failed after the guarded work completed (the storage did not answer);
		 * the lease was still valid and is left to expire on its own.
		 */
		RELEASE_FAILED {
			@Override
			public String getName() {
				return "release.failed";
			}

			@Override
			public String getContextualName() {
				return "release failed";
			}
		},

		/**
		 * The lock could not be confirmed before the transaction it guards committed (the
		 * storage did not answer or failed), so the transaction rolled back. A lease
		 * found lost then is {@link #LEASE_LOST} instead.
		 */
		PRECOMMIT_FAILED {
			@Override
			public String getName() {
				return "precommit.failed";
			}

			@Override
			public String getContextualName() {
				return "lock not confirmed before commit";
			}
		}

	}

}
