/**
 * What the Redis backends share: the lock's own connection and its Lua scripts, and the
 * release notifications over pub/sub; not API.
 */
package io.lockstep.internal.redis;
