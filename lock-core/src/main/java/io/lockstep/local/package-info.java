/**
 * JVM-local locks: the engine over an in-memory backend, for a single instance, tests,
 * and {@code lockstep.enabled=false}.
 */
package io.lockstep.local;
