/**
 * JVM-local locks: the engine over an in-memory backend, for a single instance, tests,
 * and {@code lockstep.enabled=false}.
 */
@NullMarked
package io.lockstep.local;

import org.jspecify.annotations.NullMarked;
