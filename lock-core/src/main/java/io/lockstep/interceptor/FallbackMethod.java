package io.lockstep.interceptor;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import io.lockstep.LockAcquisitionException;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The fallback method of a {@link io.lockstep.DistributedLock}: a method of the same
 * class with the same parameters, optionally followed by one that accepts a
 * {@link LockAcquisitionException} (preferred when both exist); for a Kotlin
 * {@code suspend fun}, a {@code suspend fun} (the exception last of the Kotlin
 * parameters, before the {@code Continuation}). Called on the target object, so it may be
 * private; its own annotations (e.g. {@code @Transactional}) do not apply.
 */
final class FallbackMethod {

	private final Method method;

	/** Where the exception goes in the arguments, or -1. */
	private final int exceptionIndex;

	private FallbackMethod(Method method, int exceptionIndex) {
		this.method = method;
		this.exceptionIndex = exceptionIndex;
		ReflectionUtils.makeAccessible(method);
	}

	/**
	 * Finds the fallback for the annotated method.
	 * @throws IllegalArgumentException if there is none, or its return type does not fit
	 */
	static FallbackMethod resolve(Class<?> targetClass, Method annotated, String name) {
		Class<?>[] parameters = annotated.getParameterTypes();
		// a suspend fun's fallback is a suspend fun: the exception goes before the
		// Continuation
		boolean suspending = Coroutines.isSuspending(annotated);
		int declared = parameters.length - (suspending ? 1 : 0);
		Method[] candidates = ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				(method) -> method.getName().equals(name) && !method.isBridge());
		FallbackMethod found = null;
		for (Method candidate : candidates) {
			Class<?>[] types = candidate.getParameterTypes();
			if (types.length == parameters.length + 1 && Arrays.equals(types, 0, declared, parameters, 0, declared)
					&& types[declared].isAssignableFrom(LockAcquisitionException.class)
					&& Arrays.equals(types, declared + 1, types.length, parameters, declared, parameters.length)) {
				found = new FallbackMethod(candidate, declared);
				break;
			}
			if (found == null && Arrays.equals(types, parameters)) {
				found = new FallbackMethod(candidate, -1);
			}
		}
		if (found == null) {
			List<Class<?>> declaredTypes = List.of(parameters).subList(0, declared);
			String kind = suspending ? "suspend fun " : "method ";
			String signature = name + "(" + names(declaredTypes) + ")";
			String alternative = name + "(" + names(declaredTypes) + ((declared > 0) ? ", " : "")
					+ "LockAcquisitionException)";
			String seen = (candidates.length == 0) ? "no method of that name exists"
					: "found only " + Arrays.stream(candidates)
						.map((method) -> name + "(" + names(List.of(method.getParameterTypes())) + ")")
						.collect(Collectors.joining(", "));
			throw new IllegalArgumentException("must be a " + kind + signature + " or " + alternative + " of "
					+ targetClass.getName() + "; " + seen);
		}
		Class<?> expected = annotated.getReturnType();
		Class<?> actual = found.method.getReturnType();
		if (expected != void.class && !ClassUtils.isAssignable(expected, actual)) {
			throw new IllegalArgumentException("returns " + actual.getName()
					+ ", which is not assignable to the method's return type " + expected.getName());
		}
		return found;
	}

	/** The method called reflectively. */
	Method method() {
		return this.method;
	}

	/**
	 * Calls the fallback; a {@code suspend fun} through Spring's coroutine support, which
	 * returns its call as a {@code Mono}.
	 */
	@Nullable Object invoke(@Nullable Object target, @Nullable Object[] args, @Nullable LockAcquisitionException ex)
			throws Throwable {
		@Nullable Object[] arguments = args;
		if (this.exceptionIndex >= 0) {
			arguments = new Object[args.length + 1];
			System.arraycopy(args, 0, arguments, 0, this.exceptionIndex);
			arguments[this.exceptionIndex] = ex;
			System.arraycopy(args, this.exceptionIndex, arguments, this.exceptionIndex + 1,
					args.length - this.exceptionIndex);
		}
		if (Coroutines.isSuspending(this.method)) {
			return AopUtils.invokeJoinpointUsingReflection(target, this.method, arguments);
		}
		try {
			return this.method.invoke(target, arguments);
		}
		catch (InvocationTargetException invocationFailure) {
			throw invocationFailure.getTargetException();
		}
	}

	private static String names(List<Class<?>> types) {
		return types.stream().map(Class::getSimpleName).collect(Collectors.joining(", "));
	}

}
