package io.lockstep.test.support;

import java.lang.reflect.Method;

import io.lockstep.DistributedLocks;
import io.lockstep.interceptor.DistributedLockAdvisor;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.core.Ordered;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Records every call of a method that Lockstep's {@link DistributedLockAdvisor} advises,
 * in {@link TestLocks}, with the locks held as the method starts. Ordered last
 * ({@link Ordered#LOWEST_PRECEDENCE}), so it runs inside the lock advice; with
 * {@code lockstep.aspect-order} set to that same lowest precedence the two may run in
 * either order, and a call may be recorded without its lock.
 */
final class LockedCallRecorder extends AbstractPointcutAdvisor implements BeanFactoryAware {

	private static final long serialVersionUID = 1L;

	static final String BEAN_NAME = "lockstepLockedCallRecorder";

	private final transient Pointcut pointcut = new LockedMethods();

	private final transient MethodInterceptor interceptor = this::record;

	private transient BeanFactory beanFactory;

	private transient volatile Pointcut lockPointcut;

	private transient volatile TestLocks testLocks;

	LockedCallRecorder() {
		setOrder(Ordered.LOWEST_PRECEDENCE);
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	private Object record(MethodInvocation invocation) throws Throwable {
		Method method = invocation.getMethod();
		if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(method.getReturnType()) == null) {
			Class<?> target = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis())
					: method.getDeclaringClass();
			testLocks().record(new LockedCall(ClassUtils.getUserClass(target).getSimpleName() + "." + method.getName(),
					DistributedLocks.currentLockKeys(), DistributedLocks.currentFencingToken(),
					Thread.currentThread().getName()));
		}
		return invocation.proceed();
	}

	private TestLocks testLocks() {
		TestLocks locks = this.testLocks;
		if (locks == null) {
			locks = this.beanFactory.getBean(TestLocks.BEAN_NAME, TestLocks.class);
			this.testLocks = locks;
		}
		return locks;
	}

	/**
	 * The lock advisor's pointcut, or {@code null} when the context has no single lock
	 * advisor.
	 */
	private Pointcut lockPointcut() {
		Pointcut current = this.lockPointcut;
		if (current == null) {
			DistributedLockAdvisor advisor = this.beanFactory.getBeanProvider(DistributedLockAdvisor.class)
				.getIfUnique();
			if (advisor == null) {
				return null;
			}
			current = advisor.getPointcut();
			this.lockPointcut = current;
		}
		return current;
	}

	/** The methods the lock advisor advises. */
	private final class LockedMethods extends StaticMethodMatcherPointcut {

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			Pointcut locked = lockPointcut();
			return locked != null && locked.getClassFilter().matches(targetClass)
					&& locked.getMethodMatcher().matches(method, targetClass);
		}

	}

}
