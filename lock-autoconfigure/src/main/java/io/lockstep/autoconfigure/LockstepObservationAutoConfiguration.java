package io.lockstep.autoconfigure;

import io.lockstep.observation.LockObservationConvention;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Observes locks through Micrometer when an {@link ObservationRegistry} is present: the
 * timers {@code lockstep.acquire} (tags {@code lock}, {@code outcome}) and
 * {@code lockstep.held} (tag {@code lock}), spans with a tracer, and, with a
 * {@link MeterRegistry}, the gauge {@code lockstep.active} and the counters
 * {@code lockstep.lease.lost}, {@code lockstep.release.failed} and
 * {@code lockstep.precommit.failed}. Define a {@link LockObservationConvention} bean to
 * change names or tags.
 */
@AutoConfiguration(after = ObservationAutoConfiguration.class, before = LockstepAutoConfiguration.class)
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
public final class LockstepObservationAutoConfiguration {

	@Bean
	RedisLockTemplateBuilderCustomizer lockstepObservationCustomizer(ObservationRegistry registry,
			ObjectProvider<LockObservationConvention> convention) {
		return (builder) -> builder.observationRegistry(registry, convention.getIfAvailable());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MeterConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LockMeterObservationHandler lockMeterObservationHandler(ObjectProvider<MeterRegistry> registry) {
			return new LockMeterObservationHandler(registry);
		}

	}

}
