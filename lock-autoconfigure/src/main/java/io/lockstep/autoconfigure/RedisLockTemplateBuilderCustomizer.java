package io.lockstep.autoconfigure;

import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redis.RedisLockTemplateBuilder;

/**
 * Customizes the auto-configured {@link RedisLockTemplate} after the {@code lockstep.*}
 * properties were applied to its builder.
 */
@FunctionalInterface
public interface RedisLockTemplateBuilderCustomizer {

	void customize(RedisLockTemplateBuilder builder);

}
