package io.lockstep.interceptor;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.lockstep.DistributedLock;
import io.lockstep.OnLocked;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Contributes, when an application is processed ahead of time, the runtime hints of the
 * {@link DistributedLock} methods of each bean, found and parsed as the advisor parses
 * them at start-up: the bean's class (introspected for its annotated methods and their
 * parameter names), each fallback method (called reflectively), the members each key
 * expression reads ({@link KeyExpressionHints}), and the no-argument constructor of a
 * concrete collection class that a skipped method returns empty. Registered in
 * {@code META-INF/spring/aot.factories}.
 *
 * <p>
 * An annotation that does not parse contributes nothing here: the application fails at
 * start-up with the message naming it, in AOT mode as without it.
 */
final class DistributedLockAotProcessor implements BeanRegistrationAotProcessor {

	private static final Logger logger = LoggerFactory.getLogger(DistributedLockAotProcessor.class);

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> type = ClassUtils.getUserClass(registeredBean.getBeanClass());
		if (!AnnotationUtils.isCandidateClass(type, DistributedLock.class)) {
			return null;
		}
		List<Method> annotated = new ArrayList<>();
		ReflectionUtils.doWithMethods(type, annotated::add, LockOperationSource::isAnnotated);
		if (annotated.isEmpty()) {
			return null;
		}
		Function<String, @Nullable Class<?>> beanTypes = beanTypes(registeredBean.getBeanFactory());
		return (generationContext, code) -> {
			ReflectionHints hints = generationContext.getRuntimeHints().reflection();
			hints.registerType(type);
			LockKeyExpressions expressions = new LockKeyExpressions();
			for (Method method : annotated) {
				register(hints, expressions, AopUtils.getMostSpecificMethod(method, type), method, type, beanTypes);
			}
		};
	}

	private static void register(ReflectionHints hints, LockKeyExpressions expressions, Method specific, Method method,
			Class<?> type, Function<String, @Nullable Class<?>> beanTypes) {
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null) {
			return;
		}
		try {
			SpelExpression key = (SpelExpression) expressions.parse(annotation.key(), specific, type);
			KeyExpressionHints.register(hints, key.getAST(), specific, type, beanTypes);
			String fallback = annotation.fallback().trim();
			if (!fallback.isEmpty()) {
				hints.registerMethod(FallbackMethod.resolve(type, specific, fallback).method(), ExecutableMode.INVOKE);
			}
			else if (annotation.onLocked() == OnLocked.SKIP) {
				registerEmptyCollection(hints, specific.getReturnType());
			}
		}
		catch (RuntimeException ex) {
			logger.debug("No runtime hints for @DistributedLock on {}.{}: {}", type.getName(), specific.getName(),
					ex.getMessage());
		}
	}

	/** A concrete collection or map class is created by its no-argument constructor. */
	private static void registerEmptyCollection(ReflectionHints hints, Class<?> type) {
		if ((Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type)) && !type.isInterface()
				&& !Modifier.isAbstract(type.getModifiers())) {
			for (Constructor<?> constructor : type.getDeclaredConstructors()) {
				if (constructor.getParameterCount() == 0) {
					hints.registerConstructor(constructor, ExecutableMode.INVOKE);
				}
			}
		}
	}

	private static Function<String, @Nullable Class<?>> beanTypes(BeanFactory beanFactory) {
		return (name) -> {
			try {
				return beanFactory.getType(name, false);
			}
			catch (RuntimeException ex) {
				return null;
			}
		};
	}

}
