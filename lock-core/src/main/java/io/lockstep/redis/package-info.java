/**
 * The Redis implementation: {@link io.lockstep.redis.RedisLockTemplate}, its Lua scripts,
 * the watchdog that renews leases and the waiters woken by release notifications.
 */
package io.lockstep.redis;
