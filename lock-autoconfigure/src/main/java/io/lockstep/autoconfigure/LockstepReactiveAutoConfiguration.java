package io.lockstep.autoconfigure;

import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * {@link AutoConfiguration Auto-configuration} of a {@link ReactiveLockTemplate} when
 * Reactor is on the classpath: it shares the engine and the settings of the
 * {@link LockTemplate} bean (Redis, Redlock or JVM-local), so {@code lockstep.*} applies
 * to both. Backs off from a user-defined {@link ReactiveLockTemplate} and from a
 * {@link LockTemplate} that Lockstep did not build.
 */
@AutoConfiguration(after = LockstepAutoConfiguration.class)
@ConditionalOnClass(Mono.class)
@ConditionalOnBean(LockMonitor.class)
public final class LockstepReactiveAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ReactiveLockTemplate reactiveLockTemplate(LockTemplate lockTemplate) {
		return ReactiveLocks.of(lockTemplate);
	}

}
