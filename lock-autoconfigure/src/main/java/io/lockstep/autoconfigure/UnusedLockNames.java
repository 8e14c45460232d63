package io.lockstep.autoconfigure;

import java.lang.reflect.Proxy;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

import io.lockstep.DistributedLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Once the context is refreshed, logs one WARN for each {@code lockstep.locks.<name>}
 * entry that no {@code @DistributedLock} of a bean names: a typo there would otherwise
 * leave the lock on the defaults without a word. A name used only through
 * {@code LockTemplate.named(...)} cannot be seen at start-up; the WARN says so.
 */
final class UnusedLockNames implements ApplicationListener<ContextRefreshedEvent>, ApplicationContextAware {

	private static final Logger logger = LoggerFactory.getLogger(UnusedLockNames.class);

	private final LockstepProperties properties;

	private @Nullable ApplicationContext applicationContext;

	UnusedLockNames(LockstepProperties properties) {
		this.properties = properties;
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.applicationContext = applicationContext;
	}

	/** Checks once, on its own context's refresh (not a child context's). */
	@Override
	public void onApplicationEvent(ContextRefreshedEvent event) {
		if (this.properties.getLocks().isEmpty() || event.getApplicationContext() != this.applicationContext
				|| !(event.getApplicationContext() instanceof ConfigurableApplicationContext context)) {
			return;
		}
		Set<String> used = annotationNames(context.getBeanFactory());
		for (String name : this.properties.getLocks().keySet()) {
			if (!used.contains(name)) {
				logger.warn("lockstep.locks.{} is set, but no @DistributedLock is named '{}' (the names in use: {}): "
						+ "a typo? Its settings apply only to LockTemplate.named(\"{}\"), if the application calls that",
						name, name, used, name);
			}
		}
	}

	private static Set<String> annotationNames(ConfigurableListableBeanFactory beanFactory) {
		Set<String> names = new TreeSet<>();
		Set<Class<?>> seen = new HashSet<>();
		for (String beanName : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanClass(beanFactory, beanName);
			if (type != null && seen.add(type) && AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
				ReflectionUtils.doWithMethods(type, (method) -> {
					DistributedLock lock = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
					if (lock != null && !lock.name().isEmpty()) {
						names.add(lock.name());
					}
				});
			}
		}
		return names;
	}

	private static @Nullable Class<?> beanClass(ConfigurableListableBeanFactory beanFactory, String name) {
		if (beanFactory.getBeanDefinition(name).isAbstract()) {
			return null;
		}
		if (beanFactory.containsSingleton(name)) {
			Object bean = beanFactory.getSingleton(name);
			return (bean != null) ? AopProxyUtils.ultimateTargetClass(bean) : null;
		}
		Class<?> type = beanFactory.getType(name, false);
		return (type != null && !Proxy.isProxyClass(type)) ? ClassUtils.getUserClass(type) : null;
	}

}
