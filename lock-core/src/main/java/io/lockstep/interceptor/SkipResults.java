package io.lockstep.interceptor;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

import org.springframework.core.CollectionFactory;
import org.springframework.core.ResolvableType;

/**
 * What a method returns when {@link io.lockstep.OnLocked#SKIP} skips it: "nothing" of its
 * return type.
 */
final class SkipResults {

	private SkipResults() {
	}

	/**
	 * The supplier of the skip result of the method.
	 * @throws IllegalArgumentException if the return type has no "nothing" (a primitive)
	 */
	static Supplier<@Nullable Object> of(Method method, Class<?> targetClass) {
		ResolvableType type = ResolvableType.forMethodReturnType(method, targetClass);
		Class<?> raw = method.getReturnType();
		if (raw == CompletableFuture.class || raw == CompletionStage.class) {
			Supplier<@Nullable Object> inner = empty(type.as(CompletionStage.class).getGeneric(0));
			return () -> CompletableFuture.completedFuture(inner.get());
		}
		return empty(type);
	}

	private static Supplier<@Nullable Object> empty(ResolvableType type) {
		Class<?> raw = type.resolve(Object.class);
		if (raw == void.class || raw == Void.class) {
			return () -> null;
		}
		if (raw.isPrimitive()) {
			throw new IllegalArgumentException("cannot return a value for the primitive return type " + raw
					+ "; return its wrapper type or an Optional, or use THROW or a fallback");
		}
		if (raw == Optional.class) {
			return Optional::empty;
		}
		if (raw == OptionalInt.class) {
			return OptionalInt::empty;
		}
		if (raw == OptionalLong.class) {
			return OptionalLong::empty;
		}
		if (raw == OptionalDouble.class) {
			return OptionalDouble::empty;
		}
		if (raw == Stream.class) {
			return Stream::empty;
		}
		if (raw.isArray()) {
			Object array = Array.newInstance(raw.getComponentType(), 0);
			return () -> array;
		}
		if (raw == Iterable.class) {
			return ArrayList::new;
		}
		if (Collection.class.isAssignableFrom(raw)) {
			Class<?> element = type.asCollection().resolveGeneric(0);
			return checked(() -> CollectionFactory.createCollection(raw, element, 0), raw);
		}
		if (Map.class.isAssignableFrom(raw)) {
			Class<?> key = type.asMap().resolveGeneric(0);
			return checked(() -> CollectionFactory.createMap(raw, key, 0), raw);
		}
		return () -> null;
	}

	private static Supplier<Object> checked(Supplier<Object> supplier, Class<?> type) {
		try {
			supplier.get();
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException(
					"cannot create an empty " + type.getName() + "; declare an interface type such as List, Set or Map",
					ex);
		}
		return supplier;
	}

}
