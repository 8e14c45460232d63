package io.lockstep.autoconfigure;

import io.lockstep.actuate.LocksEndpoint;
import io.lockstep.actuate.LockstepHealthIndicator;
import io.lockstep.redis.RedisLockTemplate;

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
 * Actuator is present and Lockstep's {@link RedisLockTemplate} is configured.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnBean(RedisLockTemplate.class)
public final class LockstepActuatorAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnAvailableEndpoint
		LocksEndpoint locksEndpoint(RedisLockTemplate locks, LockstepProperties properties) {
			return new LocksEndpoint(locks, properties.getKeyPrefix());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(AbstractHealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("lockstep")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "lockstepHealthIndicator")
		LockstepHealthIndicator lockstepHealthIndicator(RedisLockTemplate locks) {
			return new LockstepHealthIndicator(locks);
		}

	}

}
