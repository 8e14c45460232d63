package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import io.lockstep.DistributedLock;
import io.lockstep.LockMode;
import io.lockstep.OnLocked;
import io.lockstep.internal.engine.Sharing;
import org.jspecify.annotations.Nullable;
import io.lockstep.internal.LockConfigurationException;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.expression.Expression;

/**
 * Finds, parses and checks the {@link DistributedLock} of a method, once per method and
 * target class. A broken annotation throws a {@link LockConfigurationException} (an
 * {@link IllegalStateException}) naming the class, the method and the attribute, and
 * saying what to do.
 */
final class LockOperationSource {

	private static final Object NONE = new Object();

	private static final String MONO = "reactor.core.publisher.Mono";

	private static final String FLUX = "reactor.core.publisher.Flux";

	private final Map<MethodClassKey, Object> cache = new ConcurrentHashMap<>(256);

	private final LockKeyExpressions expressions = new LockKeyExpressions();

	private volatile @Nullable ConfigurableBeanFactory beanFactory;

	private volatile @Nullable Environment environment;

	void setBeanFactory(BeanFactory beanFactory) {
		this.expressions.setBeanFactory(beanFactory);
		if (beanFactory instanceof ConfigurableBeanFactory configurable) {
			this.beanFactory = configurable;
		}
	}

	void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	/**
	 * Whether the method carries the annotation, without parsing it. A body the compiler
	 * generated (such as the static {@code name$suspendImpl} of an open Kotlin
	 * {@code suspend fun}, which carries a copy of the annotation) does not count: the
	 * method it serves does.
	 */
	static boolean isAnnotated(Method method) {
		return !isGenerated(method) && AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class);
	}

	private static boolean isGenerated(Method method) {
		return method.isSynthetic() && !method.isBridge();
	}

	/**
	 * The operation of the method, or {@code null} when it is not annotated.
	 * @throws IllegalStateException if the annotation is broken
	 */
	@Nullable LockOperation get(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Object cached = this.cache.get(key);
		if (cached == null) {
			cached = find(method, targetClass);
			this.cache.put(key, (cached != null) ? cached : NONE);
		}
		return (cached != NONE) ? (LockOperation) cached : null;
	}

	private @Nullable LockOperation find(Method method, @Nullable Class<?> targetClass) {
		if (isGenerated(method)) {
			return null;
		}
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null) {
			return null;
		}
		Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
		return parse(annotation, specific, owner);
	}

	private LockOperation parse(DistributedLock annotation, Method method, Class<?> owner) {
		// a suspend fun is named as Kotlin declares it: without its Continuation
		int parameters = method.getParameterCount() - (Coroutines.isSuspending(method) ? 1 : 0);
		String description = "@DistributedLock on " + owner.getName() + "." + method.getName() + "("
				+ Arrays.stream(method.getParameterTypes())
					.limit(parameters)
					.map(Class::getSimpleName)
					.collect(Collectors.joining(", "))
				+ ")";
		int modifiers = method.getModifiers();
		if (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers) || Modifier.isFinal(modifiers)) {
			throw new LockConfigurationException(
					description + ": the method is " + Modifier.toString(modifiers)
							+ ", so a Spring proxy cannot intercept it and the lock would never be taken"
							+ (KotlinDetector.isKotlinType(owner) ? " (Kotlin classes and functions are final unless "
									+ "declared open; the kotlin-spring compiler plugin opens @Component classes)"
									: ""),
					"Make " + owner.getSimpleName() + "." + method.getName() + " an instance method that is neither "
							+ "private nor final, called through the bean (a call from the same object bypasses "
							+ "the proxy), or remove @DistributedLock.");
		}
		Expression key = attribute(description, "key", annotation.key(),
				() -> this.expressions.parse(annotation.key(), method, owner));
		@Nullable String name = attribute(description, "name", annotation.name(), () -> checkName(annotation.name()));
		@Nullable Duration waitTime = attribute(description, "waitTime", annotation.waitTime(),
				() -> duration(annotation.waitTime()));
		@Nullable Duration leaseTime = attribute(description, "leaseTime", annotation.leaseTime(),
				() -> duration(annotation.leaseTime()));
		@Nullable Duration minHoldTime = attribute(description, "minHoldTime", annotation.minHoldTime(),
				() -> duration(annotation.minHoldTime()));
		Sharing sharing = sharing(description, annotation.mode(), annotation.permits());
		OnLocked onLocked = annotation.onLocked();
		String fallbackName = annotation.fallback().trim();
		ReturnKind returnKind = Coroutines.isSuspending(method)
				? attribute(description, "return type", "suspend fun",
						() -> Coroutines.ofSuspending(method, onLocked, !fallbackName.isEmpty()))
				: attribute(description, "return type", method.getReturnType().getName(),
						() -> returnKind(method.getReturnType()));
		FallbackMethod fallback = null;
		Supplier<@Nullable Object> skipResult = null;
		if (!fallbackName.isEmpty()) {
			if (onLocked == OnLocked.SKIP) {
				throw new LockConfigurationException(
						description + ": fallback '" + fallbackName
								+ "' and onLocked = SKIP exclude each other; remove one",
						"Remove either fallback (to return nothing when the lock is held) or onLocked = SKIP (to "
								+ "call the fallback instead).");
			}
			fallback = attribute(description, "fallback", fallbackName,
					() -> FallbackMethod.resolve(owner, method, fallbackName));
		}
		else if (onLocked == OnLocked.SKIP && !returnKind.isReactive()) {
			skipResult = attribute(description, "onLocked", "SKIP", () -> SkipResults.of(method, owner));
		}
		return new LockOperation(description, method, annotation.key(), key, this.expressions, name,
				new LockOperation.Timing(waitTime, leaseTime, minHoldTime), sharing, returnKind, onLocked, skipResult,
				fallback);
	}

	/**
	 * How the method's lock shares its key: {@code permits} at least 1, and above 1 only
	 * in write mode (a semaphore).
	 */
	private static Sharing sharing(String description, LockMode mode, int permits) {
		String action = "Set permits = 1 for the plain lock or a read lock (mode = READ), or permits = n > 1 with "
				+ "mode = WRITE (the default) for a semaphore of n holders.";
		if (permits < 1) {
			throw new LockConfigurationException(description + ": permits = " + permits
					+ " must be at least 1 (1 is the plain lock, n > 1 a " + "semaphore of n holders)", action);
		}
		if (mode == LockMode.READ && permits > 1) {
			throw new LockConfigurationException(description + ": mode = READ and permits = " + permits
					+ " exclude each other: a read lock is shared with every other reader of the key, a semaphore "
					+ "(permits > 1) is taken in write mode", action);
		}
		return (mode == LockMode.READ) ? Sharing.READ : Sharing.permits(permits);
	}

	private static <T extends @Nullable Object> T attribute(String description, String attribute, String value,
			Supplier<T> parser) {
		try {
			return parser.get();
		}
		catch (IllegalArgumentException | IllegalStateException ex) {
			throw new LockConfigurationException(description + ": " + attribute + " '" + value + "' " + ex.getMessage(),
					action(attribute), ex);
		}
	}

	/** What to do about a broken attribute, for the start-up failure analysis. */
	private static String action(String attribute) {
		return switch (attribute) {
			case "key" -> "Write the key as a SpEL expression over the method's parameters (#order.id, #p0), @beans "
					+ "or #root.method, or quote a constant key: key = \"'report'\".";
			case "name" -> "Give the lock a plain name such as \"orders\" (names starting with '__' are reserved), "
					+ "or leave it empty.";
			case "waitTime", "leaseTime", "minHoldTime" -> "Write " + attribute + " as a duration such as \"2s\", "
					+ "\"500ms\" or \"PT2S\", or as a placeholder with a default such as \"${orders.lock-wait:2s}\", "
					+ "or leave it empty for the default.";
			case "fallback" -> "Name a method of the same bean with the same parameters (optionally followed by a "
					+ "LockAcquisitionException) and a compatible return type.";
			case "onLocked" -> "Return a type that SKIP can answer without running the method (void, a nullable "
					+ "object, Optional, a collection, a future), or use THROW or a fallback.";
			default -> "Declare a return type the lock can cover: a value, CompletableFuture or CompletionStage, "
					+ "Mono or Flux, or in Kotlin a suspend fun or a Flow.";
		};
	}

	private static @Nullable String checkName(String name) {
		String trimmed = name.trim();
		if (trimmed.isEmpty()) {
			return null;
		}
		if (trimmed.startsWith("__")) {
			throw new IllegalArgumentException("is reserved: names starting with '__' are Lockstep's own");
		}
		return trimmed;
	}

	private @Nullable Duration duration(String text) {
		if (text.isBlank()) {
			return null;
		}
		String resolved = resolvePlaceholders(text);
		try {
			return Durations.parse(resolved);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					resolved.equals(text) ? ex.getMessage() : "(resolved to '" + resolved + "') " + ex.getMessage());
		}
	}

	private String resolvePlaceholders(String text) {
		if (!text.contains("${")) {
			return text;
		}
		ConfigurableBeanFactory factory = this.beanFactory;
		if (factory != null && factory.hasEmbeddedValueResolver()) {
			String resolved = factory.resolveEmbeddedValue(text);
			if (resolved == null) {
				throw new IllegalArgumentException("resolves to null");
			}
			return resolved;
		}
		Environment environment = this.environment;
		if (environment != null) {
			return environment.resolveRequiredPlaceholders(text);
		}
		throw new IllegalArgumentException("cannot be resolved: no placeholder resolver is available");
	}

	private static ReturnKind returnKind(Class<?> returnType) {
		if (returnType == CompletableFuture.class || returnType == CompletionStage.class) {
			return ReturnKind.FUTURE;
		}
		if (Future.class.isAssignableFrom(returnType) || CompletionStage.class.isAssignableFrom(returnType)) {
			throw new IllegalArgumentException("is not supported: declare CompletableFuture or CompletionStage, "
					+ "which hold the lock until they complete");
		}
		if (returnType.getName().equals(MONO)) {
			return ReturnKind.MONO;
		}
		if (returnType.getName().equals(FLUX)) {
			return ReturnKind.FLUX;
		}
		if (isA(returnType, "org.reactivestreams.Publisher")) {
			throw new IllegalArgumentException("is not supported: declare Mono or Flux (Reactor), which hold the lock "
					+ "for each subscription; another Publisher would release it before the work runs");
		}
		if (isA(returnType, Coroutines.FLOW)) {
			return Coroutines.ofFlow(returnType);
		}
		return ReturnKind.PLAIN;
	}

	private static boolean isA(@Nullable Class<?> type, String name) {
		if (type == null) {
			return false;
		}
		if (type.getName().equals(name)) {
			return true;
		}
		for (Class<?> implemented : type.getInterfaces()) {
			if (isA(implemented, name)) {
				return true;
			}
		}
		return isA(type.getSuperclass(), name);
	}

}
