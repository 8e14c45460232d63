/**
 * Redlock: locks over N independent Redis masters with a quorum, through
 * {@link io.lockstep.redlock.Redlock}.
 */
package io.lockstep.redlock;
