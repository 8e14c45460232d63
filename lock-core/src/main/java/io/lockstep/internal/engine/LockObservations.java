package io.lockstep.internal.engine;

import io.lockstep.observation.DefaultLockObservationConvention;
import io.lockstep.observation.LockObservationContext;
import io.lockstep.observation.LockObservationConvention;
import io.lockstep.observation.LockObservationDocumentation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * What the engine tells about its locks, through Micrometer's Observation API (a
 * dependency of Spring Framework itself): {@code lockstep.acquire} and
 * {@code lockstep.held}, with the events of a held lock. A no-op on
 * {@link ObservationRegistry#NOOP}.
 */
final class LockObservations {

	private final ObservationRegistry registry;

	private final LockObservationConvention convention;

	LockObservations(ObservationRegistry registry, LockObservationConvention convention) {
		this.registry = (registry != null) ? registry : ObservationRegistry.NOOP;
		this.convention = (convention != null) ? convention : new DefaultLockObservationConvention();
	}

	Observation startAcquire(String key, String lockName) {
		return start(LockObservationDocumentation.ACQUIRE, LockObservationContext.Kind.ACQUIRE, key, lockName);
	}

	/**
	 * @param outcome {@link LockObservationContext#ACQUIRED},
	 * {@link LockObservationContext#TIMEOUT}, {@link LockObservationContext#SKIPPED},
	 * {@link LockObservationContext#CANCELLED} or {@link LockObservationContext#ERROR}
	 */
	void stopAcquire(Observation acquire, String outcome, long fencingToken, Throwable error) {
		if (acquire.getContext() instanceof LockObservationContext context) {
			context.setOutcome(outcome);
			context.setFencingToken(fencingToken);
		}
		if (error != null) {
			acquire.error(error);
		}
		acquire.stop();
	}

	Observation startHeld(String key, String lockName, long fencingToken) {
		Observation observation = start(LockObservationDocumentation.HELD, LockObservationContext.Kind.HELD, key,
				lockName);
		if (observation.getContext() instanceof LockObservationContext context) {
			context.setFencingToken(fencingToken);
		}
		return observation;
	}

	void stopHeld(Observation held) {
		held.stop();
	}

	void leaseLost(Observation held) {
		held.event(LockObservationDocumentation.Events.LEASE_LOST);
	}

	void releaseFailed(Observation held) {
		held.event(LockObservationDocumentation.Events.RELEASE_FAILED);
	}

	void precommitFailed(Observation held) {
		held.event(LockObservationDocumentation.Events.PRECOMMIT_FAILED);
	}

	private Observation start(LockObservationDocumentation documentation, LockObservationContext.Kind kind, String key,
			String lockName) {
		// the context is made only for a registry that observes (not for the no-op one)
		return Observation
			.createNotStarted(documentation.getName(), () -> new LockObservationContext(kind, key, lockName),
					this.registry)
			.observationConvention(this.convention)
			.start();
	}

}
