package io.lockstep.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

import org.jspecify.annotations.Nullable;

/**
 * The default tags: {@code lockstep.acquire} with {@code lock} and {@code outcome} (once
 * the acquisition ended: the {@code lockstep.acquire.active} long-task timer of
 * acquisitions under way has {@code lock} only), {@code lockstep.held} with {@code lock}.
 * The Redis key is only a high-cardinality value (span attribute), never a meter tag.
 */
public class DefaultLockObservationConvention implements LockObservationConvention {

	/**
	 * {@code null}: keeps the documented name of each kind ({@code lockstep.acquire},
	 * {@code lockstep.held}).
	 */
	@Override
	public @Nullable String getName() {
		return null;
	}

	@Override
	public String getContextualName(LockObservationContext context) {
		return ((context.getKind() == LockObservationContext.Kind.ACQUIRE) ? "lock acquire " : "lock held ")
				+ context.getLockName();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(LockObservationContext context) {
		KeyValues values = KeyValues.of(KeyValue.of(ObservationKeys.LOCK, context.getLockName()));
		if (context.getKind() == LockObservationContext.Kind.ACQUIRE && context.getOutcome() != null) {
			values = values.and(KeyValue.of(ObservationKeys.OUTCOME, context.getOutcome()));
		}
		return values;
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockObservationContext context) {
		return KeyValues.of(KeyValue.of(ObservationKeys.KEY, context.getKey()));
	}

}
