package io.lockstep.autoconfigure;

import io.lockstep.LockTemplate;
import io.lockstep.integration.LockstepLockRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * {@link AutoConfiguration Auto-configuration} of a {@link LockstepLockRegistry} on the
 * {@link LockTemplate} bean when Spring Integration and
 * {@code lockstep-spring-integration} are on the classpath, so that Spring Integration's
 * leader election and lock-using components run on Lockstep's locks. Backs off from any
 * {@link LockRegistry} bean of the application's.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnClass({ LockRegistry.class, LockstepLockRegistry.class })
@ConditionalOnBean(LockTemplate.class)
public final class LockstepIntegrationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockRegistry.class)
	LockstepLockRegistry lockstepLockRegistry(LockTemplate lockTemplate) {
		return new LockstepLockRegistry(lockTemplate);
	}

}
