package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.lockstep.internal.engine.Storage;

/**
 * How a store of Lockstep's own (Redlock) gets a public template builder without a public
 * method that takes an internal type: each builder type tells, when it is initialized,
 * how to make one on a {@link StorageFactory}.
 */
public final class TemplateBuilders {

	private static final Map<Class<?>, Function<StorageFactory, ?>> factories = new ConcurrentHashMap<>();

	private TemplateBuilders() {
	}

	/** Called once by the builder type, when it is initialized. */
	public static <B> void register(Class<B> type, Function<StorageFactory, B> factory) {
		factories.put(type, factory);
	}

	/** A builder of the type on the storage. */
	public static <B> B on(Class<B> type, StorageFactory storage) {
		try {
			// runs the type's initializer, which registers it
			Class.forName(type.getName(), true, type.getClassLoader());
		}
		catch (ClassNotFoundException ex) {
			throw new IllegalStateException(ex);
		}
		Function<StorageFactory, ?> factory = factories.get(type);
		if (factory == null) {
			throw new IllegalStateException(type.getName() + " did not register a builder factory");
		}
		return type.cast(factory.apply(storage));
	}

	/**
	 * Creates the storage of a template once its builder knows the command timeout and
	 * the key prefix.
	 */
	@FunctionalInterface
	public interface StorageFactory {

		Storage create(Duration commandTimeout, String keyPrefix);

	}

}
