package io.lockstep.autoconfigure;

import io.lockstep.actuate.LocksEndpoint;
import io.lockstep.actuate.LockstepHealthIndicator;
import io.lockstep.LockMonitor;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Actuator {@code locks} endpoint and the {@code lockstep} health indicator, when
 * Actuator is present and a lock client ({@link LockMonitor}) is configured.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnBean(LockMonitor.class)
public final class LockstepActuatorAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnAvailableEndpoint
		LocksEndpoint locksEndpoint(LockMonitor locks) {
			return new LocksEndpoint(locks);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(AbstractHealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("lockstep")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "lockstepHealthIndicator")
		LockstepHealthIndicator lockstepHealthIndicator(LockMonitor locks) {
			return new LockstepHealthIndicator(locks);
		}

	}

}
