package io.lockstep.test.support;

import java.util.List;
import java.util.Map;

import io.lockstep.test.RedisNode;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Registers {@link TestLocks} and its call recorder; for a {@link TestRedis} class,
 * starts its server and points {@code spring.data.redis.*} at it; for a
 * {@link LocalLocks} class, sets {@code lockstep.enabled=false}. Equal for equal
 * settings, so the context cache shares contexts where it can (one per {@link TestRedis}
 * class).
 *
 * @param redisClass the test class that declares {@link TestRedis}, or {@code null}
 * @param redisArguments its extra {@code redis-server} options
 * @param localLocks whether the class has {@link LocalLocks}
 */
record LockstepTestContextCustomizer(Class<?> redisClass, List<String> redisArguments,
		boolean localLocks) implements ContextCustomizer {

	@Override
	public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
		if (this.redisClass != null) {
			RedisNode redis = TestRedisServers.start(this.redisClass, this.redisArguments);
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("lockstepTestRedis", Map.of("spring.data.redis.host", redis.host(),
						"spring.data.redis.port", redis.port(), "spring.data.redis.url", redis.uri())));
		}
		if (this.localLocks) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("lockstepLocalLocks", Map.of("lockstep.enabled", "false")));
		}
		if (context.getBeanFactory() instanceof BeanDefinitionRegistry registry) {
			register(registry);
		}
	}

	/**
	 * Plain definitions (a class and its one constructor, no instance supplier), as
	 * ahead-of-time processing of test contexts needs them.
	 */
	private static void register(BeanDefinitionRegistry registry) {
		if (!registry.containsBeanDefinition(TestLocks.BEAN_NAME)) {
			registry.registerBeanDefinition(TestLocks.BEAN_NAME, new RootBeanDefinition(TestLocks.class));
		}
		if (!registry.containsBeanDefinition(LockedCallRecorder.BEAN_NAME)) {
			RootBeanDefinition recorder = new RootBeanDefinition(LockedCallRecorder.class);
			recorder.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
			registry.registerBeanDefinition(LockedCallRecorder.BEAN_NAME, recorder);
		}
	}

}
