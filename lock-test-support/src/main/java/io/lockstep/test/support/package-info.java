/**
 * Lockstep in an application's own Spring tests: a real {@code redis-server} per test
 * class ({@link io.lockstep.test.support.TestRedis}), JVM-local locks
 * ({@link io.lockstep.test.support.LocalLocks}), clearing every lock between tests and
 * checking that methods ran under their lock ({@link io.lockstep.test.support.TestLocks},
 * {@link io.lockstep.test.support.LockAssert}).
 */
package io.lockstep.test.support;
