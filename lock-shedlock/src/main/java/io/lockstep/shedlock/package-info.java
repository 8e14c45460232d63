/**
 * ShedLock's {@code LockProvider} on Lockstep
 * ({@link io.lockstep.shedlock.LockstepLockProvider}).
 */
@NullMarked
package io.lockstep.shedlock;

import org.jspecify.annotations.NullMarked;
