/**
 * Spring Integration's {@code LockRegistry} on Lockstep, for its leader election and its
 * lock-using components.
 */
@NullMarked
package io.lockstep.integration;

import org.jspecify.annotations.NullMarked;
