package io.lockstep.interceptor;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import io.lockstep.LockAcquisitionException;

import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The fallback method of a {@link io.lockstep.DistributedLock}: a method of the same
 * class with the same parameters, optionally followed by one that accepts a
 * {@link LockAcquisitionException} (preferred when both exist). Called on the target
 * object, so it may be private; its own annotations (e.g. {@code @Transactional}) do not
 * apply.
 */
final class FallbackMethod {

	private final Method method;

	private final boolean withException;

	private FallbackMethod(Method method, boolean withException) {
		this.method = method;
		this.withException = withException;
		ReflectionUtils.makeAccessible(method);
	}

	/**
	 * Finds the fallback for the annotated method.
	 * @throws IllegalArgumentException if there is none, or its return type does not fit
	 */
	static FallbackMethod resolve(Class<?> targetClass, Method annotated, String name) {
		Class<?>[] parameters = annotated.getParameterTypes();
		Method[] candidates = ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				(method) -> method.getName().equals(name) && !method.isBridge());
		FallbackMethod found = null;
		for (Method candidate : candidates) {
			Class<?>[] types = candidate.getParameterTypes();
			if (types.length == parameters.length + 1
					&& Arrays.equals(types, 0, parameters.length, parameters, 0, parameters.length)
					&& types[parameters.length].isAssignableFrom(LockAcquisitionException.class)) {
				found = new FallbackMethod(candidate, true);
				break;
			}
			if (found == null && Arrays.equals(types, parameters)) {
				found = new FallbackMethod(candidate, false);
			}
		}
		if (found == null) {
			String signature = name + "(" + names(List.of(parameters)) + ")";
			String alternative = name + "(" + names(List.of(parameters)) + ((parameters.length > 0) ? ", " : "")
					+ "LockAcquisitionException)";
			String seen = (candidates.length == 0) ? "no method of that name exists"
					: "found only " + Arrays.stream(candidates)
						.map((method) -> name + "(" + names(List.of(method.getParameterTypes())) + ")")
						.collect(Collectors.joining(", "));
			throw new IllegalArgumentException("must be a method " + signature + " or " + alternative + " of "
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

	Object invoke(Object target, Object[] args, LockAcquisitionException ex) throws Throwable {
		Object[] arguments = args;
		if (this.withException) {
			arguments = Arrays.copyOf(args, args.length + 1);
			arguments[args.length] = ex;
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
