/**
 * The single-master Redis backend: {@link io.lockstep.redis.RedisLockTemplate}, its
 * builder, its Lua scripts and its release notifications over pub/sub.
 */
@NullMarked
package io.lockstep.redis;

import org.jspecify.annotations.NullMarked;
