package io.lockstep.autoconfigure;

import java.util.concurrent.locks.Lock;

import io.lockstep.LockTemplate;
import io.lockstep.integration.LockstepLockRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LockstepIntegrationAutoConfiguration}: a {@link LockstepLockRegistry} on the
 * {@link LockTemplate} bean, backing off from the application's {@link LockRegistry} and
 * absent without Spring Integration or the module. JVM-local locks
 * ({@code lockstep.enabled=false}): no Redis is needed to wire it.
 */
class LockstepIntegrationAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(LockstepAutoConfiguration.class, LockstepIntegrationAutoConfiguration.class))
		.withPropertyValues("lockstep.enabled=false");

	@Test
	void aLockRegistryOnTheLockTemplateIsAutoConfigured() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(LockstepLockRegistry.class);
			Lock lock = context.getBean(LockRegistry.class).obtain("job");
			lock.lock();
			try {
				assertThat(context.getBean(LockTemplate.class).isLocked("job")).as("locked through the template")
					.isTrue();
			}
			finally {
				lock.unlock();
			}
			assertThat(context.getBean(LockTemplate.class).isLocked("job")).isFalse();
		});
	}

	@Test
	void backsOffFromTheApplicationsLockRegistry() {
		this.contextRunner.withUserConfiguration(UserLockRegistryConfiguration.class).run((context) -> {
			assertThat(context).doesNotHaveBean(LockstepLockRegistry.class);
			assertThat(context).hasSingleBean(LockRegistry.class);
		});
	}

	@Test
	void absentWithoutSpringIntegration() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(LockRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(LockstepLockRegistry.class)
				.hasSingleBean(LockTemplate.class));
	}

	@Test
	void absentWithoutTheModule() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(LockstepLockRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(LockstepLockRegistry.class)
				.hasSingleBean(LockTemplate.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserLockRegistryConfiguration {

		@Bean
		LockRegistry<?> applicationsRegistry() {
			return new DefaultLockRegistry();
		}

	}

}
