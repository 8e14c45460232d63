package io.lockstep.interceptor;

import java.lang.reflect.Method;

import io.lockstep.OnLocked;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Kotlin coroutines on {@link io.lockstep.DistributedLock} methods, locked through the
 * same mechanism as {@code Mono}/{@code Flux}, as Spring's own {@code @Transactional}
 * does: Spring's AOP runs a {@code suspend fun} as a {@code Mono} (a {@code Flux} for a
 * {@code Flow} result) through {@code kotlinx-coroutines-reactor} and
 * {@code kotlin-reflect}, and a {@code Flow} is adapted to a {@code Flux} and back by
 * Spring's {@link ReactiveAdapterRegistry}. Checks, when the method is parsed, that what
 * this needs is on the classpath. Refers to no Kotlin type, so Kotlin stays optional.
 */
final class Coroutines {

	static final String FLOW = "kotlinx.coroutines.flow.Flow";

	private static final String NEEDS = "needs kotlinx-coroutines-reactor and kotlin-reflect on the classpath "
			+ "(add io.lockstep:lockstep-kotlin), through which Spring runs coroutines as Mono/Flux, "
			+ "which the lock is held for";

	private Coroutines() {
	}

	static boolean isSuspending(Method method) {
		return KotlinDetector.isSuspendingFunction(method);
	}

	/**
	 * The kind of a {@code suspend fun}.
	 * @throws IllegalArgumentException if Spring cannot run it as a {@code Mono}, or if
	 * {@code SKIP} would return {@code null} where Kotlin expects a value
	 */
	static ReturnKind ofSuspending(Method method, OnLocked onLocked, boolean hasFallback) {
		if (!ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", Coroutines.class.getClassLoader())
				|| !KotlinDetector.isKotlinReflectPresent()) {
			throw new IllegalArgumentException(NEEDS);
		}
		MethodParameter returned = new MethodParameter(method, -1);
		Class<?> type = returned.getParameterType();
		if (FLOW.equals(type.getName())) {
			return ReturnKind.SUSPEND_FLOW;
		}
		if (onLocked == OnLocked.SKIP && !hasFallback && type != void.class && !returned.isOptional()) {
			throw new IllegalArgumentException("is not nullable (" + type.getSimpleName() + "), but a skipped suspend "
					+ "fun returns null: declare it nullable, or use THROW or a fallback");
		}
		return ReturnKind.SUSPEND;
	}

	/**
	 * The kind of a method returning a {@code Flow} or one of its subtypes.
	 * @throws IllegalArgumentException for a subtype, or without the adapter
	 */
	static ReturnKind ofFlow(Class<?> returnType) {
		if (!FLOW.equals(returnType.getName())) {
			throw new IllegalArgumentException("is not supported: declare Flow, which holds the lock for each "
					+ "collection; a " + returnType.getSimpleName() + " is hot and runs whether collected or not");
		}
		adapter(returnType);
		return ReturnKind.FLOW;
	}

	/**
	 * Spring's adapter between {@code Flow} and {@code Publisher}.
	 * @throws IllegalArgumentException when it is not registered
	 */
	static ReactiveAdapter adapter(Class<?> flowType) {
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(flowType);
		if (adapter == null) {
			throw new IllegalArgumentException(NEEDS);
		}
		return adapter;
	}

}
