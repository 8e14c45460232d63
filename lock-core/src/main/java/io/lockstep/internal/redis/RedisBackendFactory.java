package io.lockstep.internal.redis;

import java.time.Duration;

import io.lockstep.internal.engine.LockBackend;

/**
 * Creates the Redis backend of a template once its builder knows the command timeout and
 * the key prefix.
 */
@FunctionalInterface
public interface RedisBackendFactory {

	LockBackend create(Duration commandTimeout, String keyPrefix);

}
