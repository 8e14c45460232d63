package io.lockstep.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.observation.LockObservationContext;
import io.lockstep.observation.LockObservationDocumentation;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Keeps the meters that timers do not give: {@code lockstep.active} (locks held now, per
 * lock name), {@code lockstep.lease.lost} (leases lost, per lock name),
 * {@code lockstep.release.failed} (releases that failed after the work completed) and
 * {@code lockstep.precommit.failed} (transactions rolled back because their lock could
 * not be confirmed before commit).
 */
public class LockMeterObservationHandler implements ObservationHandler<LockObservationContext> {

	private final ObjectProvider<MeterRegistry> registry;

	private final Map<String, AtomicInteger> active = new ConcurrentHashMap<>();

	public LockMeterObservationHandler(ObjectProvider<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public void onStart(LockObservationContext context) {
		if (context.getKind() == LockObservationContext.Kind.HELD) {
			active(context.getLockName()).incrementAndGet();
		}
	}

	@Override
	public void onStop(LockObservationContext context) {
		if (context.getKind() == LockObservationContext.Kind.HELD) {
			active(context.getLockName()).decrementAndGet();
		}
	}

	@Override
	public void onEvent(Observation.Event event, LockObservationContext context) {
		MeterRegistry meters = this.registry.getIfAvailable();
		if (meters == null) {
			return;
		}
		if (LockObservationDocumentation.Events.LEASE_LOST.getName().equals(event.getName())) {
			Counter.builder("lockstep.lease.lost")
				.description("Leases lost while held")
				.tag("lock", context.getLockName())
				.register(meters)
				.increment();
		}
		else if (LockObservationDocumentation.Events.RELEASE_FAILED.getName().equals(event.getName())) {
			Counter.builder("lockstep.release.failed")
				.description("Releases that failed after the guarded work completed; the lease expired on its own")
				.tag("lock", context.getLockName())
				.register(meters)
				.increment();
		}
		else if (LockObservationDocumentation.Events.PRECOMMIT_FAILED.getName().equals(event.getName())) {
			Counter.builder("lockstep.precommit.failed")
				.description("Transactions rolled back because their lock could not be confirmed before commit "
						+ "(Redis did not answer or failed)")
				.tag("lock", context.getLockName())
				.register(meters)
				.increment();
		}
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof LockObservationContext;
	}

	private AtomicInteger active(String lockName) {
		return this.active.computeIfAbsent(lockName, (name) -> {
			AtomicInteger count = new AtomicInteger();
			MeterRegistry meters = this.registry.getIfAvailable();
			if (meters != null) {
				Gauge.builder("lockstep.active", count, AtomicInteger::get)
					.description("Locks held now by this instance")
					.tag("lock", name)
					.strongReference(true)
					.register(meters);
			}
			return count;
		});
	}

}
