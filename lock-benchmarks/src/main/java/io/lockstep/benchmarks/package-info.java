/**
 * JMH benchmarks of Lockstep against Redisson, Spring Integration and a raw-Lettuce floor
 * on one real redis-server, the runner that writes JMH's JSON result, and
 * {@link Compare}, which puts results side by side.
 */
package io.lockstep.benchmarks;
