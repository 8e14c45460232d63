package io.lockstep.shedlock.autoconfigure;

import io.lockstep.LockTemplate;
import io.lockstep.autoconfigure.LockstepAutoConfiguration;
import io.lockstep.shedlock.LockstepLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link AutoConfiguration Auto-configuration} of ShedLock on Lockstep: a
 * {@link LockstepLockProvider} on the application's {@link LockTemplate}, so that
 * {@code @SchedulerLock} jobs lock with Lockstep (ShedLock's {@code @EnableSchedulerLock}
 * is still the application's to declare). Backs off from a {@link LockProvider} bean of
 * the application's, and without ShedLock on the classpath.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnClass(LockProvider.class)
@ConditionalOnBean(LockTemplate.class)
public final class LockstepShedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(LockProvider.class)
	LockstepLockProvider lockstepLockProvider(LockTemplate lockTemplate) {
		return new LockstepLockProvider(lockTemplate);
	}

}
