/**
 * Spring Boot auto-configuration of ShedLock's {@code LockProvider} on Lockstep.
 */
@NullMarked
package io.lockstep.shedlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
