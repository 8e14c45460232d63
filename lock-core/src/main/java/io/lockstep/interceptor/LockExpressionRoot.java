package io.lockstep.interceptor;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * The root object of a key expression: {@code #root.method}, {@code #root.methodName},
 * {@code #root.args}, {@code #root.target}, {@code #root.targetClass}.
 */
final class LockExpressionRoot {

	private final Method method;

	private final @Nullable Object[] args;

	private final @Nullable Object target;

	private final @Nullable Class<?> targetClass;

	LockExpressionRoot(Method method, @Nullable Object[] args, @Nullable Object target,
			@Nullable Class<?> targetClass) {
		this.method = method;
		this.args = args;
		this.target = target;
		this.targetClass = targetClass;
	}

	public Method getMethod() {
		return this.method;
	}

	public String getMethodName() {
		return this.method.getName();
	}

	public @Nullable Object[] getArgs() {
		return this.args;
	}

	public @Nullable Object getTarget() {
		return this.target;
	}

	public @Nullable Class<?> getTargetClass() {
		return this.targetClass;
	}

}
