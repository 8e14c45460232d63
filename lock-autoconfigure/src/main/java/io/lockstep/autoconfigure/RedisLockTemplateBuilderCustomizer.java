package io.lockstep.autoconfigure;

import io.lockstep.redis.RedisLockTemplate;

/**
 * Customizes the auto-configured {@link RedisLockTemplate} after the {@code lockstep.*}
 * properties were applied to its builder.
 */
@FunctionalInterface
public interface RedisLockTemplateBuilderCustomizer {

	void customize(RedisLockTemplate.Builder builder);

}
