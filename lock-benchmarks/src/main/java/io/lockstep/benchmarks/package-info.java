/**
 * JMH benchmarks of Lockstep against Redisson, Spring Integration and a raw-Lettuce floor
 * on one real redis-server, and the runner that writes {@code docs/benchmarks.md}.
 */
package io.lockstep.benchmarks;
