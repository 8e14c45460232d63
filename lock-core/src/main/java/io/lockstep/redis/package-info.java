/**
 * The single-master Redis backend: {@link io.lockstep.redis.RedisLockTemplate}, its
 * builder, its Lua scripts and its release notifications over pub/sub.
 */
package io.lockstep.redis;
