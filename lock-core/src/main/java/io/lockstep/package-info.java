/**
 * Distributed locks on Redis: {@link io.lockstep.LockTemplate},
 * {@link io.lockstep.LockHandle}, {@link io.lockstep.DistributedLock} and the exceptions
 * they throw.
 */
@NullMarked
package io.lockstep;

import org.jspecify.annotations.NullMarked;
