/**
 * Redlock: locks over N independent Redis masters with a quorum, through
 * {@link io.lockstep.redlock.Redlock}.
 */
@NullMarked
package io.lockstep.redlock;

import org.jspecify.annotations.NullMarked;
