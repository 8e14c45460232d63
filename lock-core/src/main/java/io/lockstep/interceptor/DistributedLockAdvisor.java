package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.lockstep.DistributedLock;
import io.lockstep.LockTemplate;
import io.lockstep.internal.LockConfigurationException;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.Assert;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The Spring AOP advisor of {@link DistributedLock}: matches annotated methods and runs
 * them holding their lock. Register it as a bean (with an auto-proxy creator present); it
 * then checks every annotated method of every bean once all singletons exist, and a
 * broken annotation fails the start of the application context with a message naming the
 * class, the method and the attribute.
 *
 * <p>
 * Its order ({@link #DEFAULT_ORDER} unless {@link #setOrder(int) set}) runs it outside
 * the transaction advice of {@code @Transactional}, whose order is
 * {@link Ordered#LOWEST_PRECEDENCE} by default: the lock is taken before the transaction
 * begins and released after it commits. An order of {@code Ordered.LOWEST_PRECEDENCE} or
 * a transaction advice ordered before this one reverses that and lets two callers run the
 * same transaction's reads before either commits.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor
		implements BeanFactoryAware, EnvironmentAware, SmartInitializingSingleton {

	private static final long serialVersionUID = 1L;

	/**
	 * The default order: 100 steps of higher precedence than the default transaction
	 * advice ({@link Ordered#LOWEST_PRECEDENCE}), so the lock wraps the transaction.
	 */
	public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	private final transient LockOperationSource operations = new LockOperationSource();

	private final transient DistributedLockInterceptor interceptor;

	private final transient Pointcut pointcut = new LockPointcut();

	private transient @Nullable ConfigurableListableBeanFactory beanFactory;

	/**
	 * Creates the advisor.
	 * @param locks supplies the {@link LockTemplate} on first use (it is not looked up
	 * while the advisor is created, which happens early)
	 */
	public DistributedLockAdvisor(Supplier<? extends LockTemplate> locks) {
		Assert.notNull(locks, "'locks' must not be null");
		this.interceptor = new DistributedLockInterceptor(this.operations, locks);
		setOrder(DEFAULT_ORDER);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
		this.operations.setBeanFactory(beanFactory);
		if (beanFactory instanceof ConfigurableListableBeanFactory listable) {
			this.beanFactory = listable;
		}
	}

	@Override
	public void setEnvironment(Environment environment) {
		this.operations.setEnvironment(environment);
	}

	/**
	 * Checks every {@link DistributedLock} method of every bean.
	 * @throws IllegalStateException for the first broken annotation, or naming every
	 * method whose read lock or semaphore the lock store cannot keep
	 */
	@Override
	public void afterSingletonsInstantiated() {
		ConfigurableListableBeanFactory beanFactory = this.beanFactory;
		if (beanFactory == null) {
			return;
		}
		Set<Class<?>> checked = new HashSet<>();
		List<LockConfigurationException> refused = new ArrayList<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanClass(beanFactory, name);
			if (type != null && checked.add(type) && AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
				ReflectionUtils.doWithMethods(type, (method) -> check(method, type, refused),
						LockOperationSource::isAnnotated);
			}
		}
		if (refused.size() == 1) {
			throw refused.get(0);
		}
		if (refused.size() > 1) {
			throw new LockConfigurationException(
					refused.size() + " @DistributedLock methods ask for what Redlock cannot honour:"
							+ refused.stream()
								.map((ex) -> System.lineSeparator() + "- " + ex.getMessage())
								.collect(Collectors.joining()),
					refused.get(0).action(), refused.get(0));
		}
	}

	/**
	 * Parses the method's annotation and builds its template copy, which the template
	 * checks against the lockstep.* properties and its lock store. A read lock or
	 * semaphore the lock store cannot keep (Redlock) is collected, so that start-up names
	 * every such method at once.
	 * @throws LockConfigurationException naming the method, for any other problem
	 */
	private void check(Method method, Class<?> type, List<LockConfigurationException> refused) {
		LockOperation operation = this.operations.get(method, type);
		if (operation != null) {
			try {
				this.interceptor.template(operation);
			}
			catch (LockConfigurationException ex) {
				if (!(ex.getCause() instanceof UnsupportedOperationException)) {
					throw ex;
				}
				refused.add(ex);
			}
		}
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

	/** Matches methods carrying the annotation; parses it on first match. */
	private final class LockPointcut extends StaticMethodMatcherPointcut {

		LockPointcut() {
			setClassFilter(new ClassFilter() {

				@Override
				public boolean matches(Class<?> type) {
					return AnnotationUtils.isCandidateClass(type, DistributedLock.class);
				}

			});
		}

		@Override
		public boolean matches(Method method, @Nullable Class<?> targetClass) {
			return DistributedLockAdvisor.this.operations.get(method, targetClass) != null;
		}

	}

}
