package io.lockstep.internal.redis;

import java.time.Duration;

import io.lockstep.internal.engine.Storage;

/**
 * Creates the storage of a template once its builder knows the command timeout and the
 * key prefix.
 */
@FunctionalInterface
public interface StorageFactory {

	Storage create(Duration commandTimeout, String keyPrefix);

}
