package io.lockstep.redis;

import io.lockstep.observation.DefaultLockObservationConvention;
import io.lockstep.observation.LockObservationContext;
import io.lockstep.observation.LockObservationConvention;
import io.lockstep.observation.LockObservationDocumentation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Lock observations through Micrometer's Observation API: timers and, with a tracer,
 * spans. Loaded only when an {@link ObservationRegistry} is configured.
 */
final class MicrometerLockObservations implements LockObservations {

	private final ObservationRegistry registry;

	private final LockObservationConvention convention;

	MicrometerLockObservations(ObservationRegistry registry, LockObservationConvention convention) {
		this.registry = registry;
		this.convention = (convention != null) ? convention : new DefaultLockObservationConvention();
	}

	@Override
	public Object startAcquire(String key, String lockName) {
		return start(LockObservationDocumentation.ACQUIRE, LockObservationContext.Kind.ACQUIRE, key, lockName);
	}

	@Override
	public void stopAcquire(Object acquire, String outcome, long fencingToken, Throwable error) {
		Observation observation = (Observation) acquire;
		if (observation.getContext() instanceof LockObservationContext context) {
			context.setOutcome(outcome);
			context.setFencingToken(fencingToken);
		}
		if (error != null) {
			observation.error(error);
		}
		observation.stop();
	}

	@Override
	public Object startHeld(String key, String lockName, long fencingToken) {
		Observation observation = start(LockObservationDocumentation.HELD, LockObservationContext.Kind.HELD, key,
				lockName);
		if (observation.getContext() instanceof LockObservationContext context) {
			context.setFencingToken(fencingToken);
		}
		return observation;
	}

	@Override
	public void stopHeld(Object held) {
		((Observation) held).stop();
	}

	@Override
	public void leaseLost(Object held, String reason) {
		((Observation) held).event(LockObservationDocumentation.Events.LEASE_LOST);
	}

	private Observation start(LockObservationDocumentation documentation, LockObservationContext.Kind kind, String key,
			String lockName) {
		LockObservationContext context = new LockObservationContext(kind, key, lockName);
		return Observation.createNotStarted(documentation.getName(), () -> context, this.registry)
			.observationConvention(this.convention)
			.start();
	}

}
