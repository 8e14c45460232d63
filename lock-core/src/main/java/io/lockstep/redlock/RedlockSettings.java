package io.lockstep.redlock;

import java.time.Duration;

/**
 * What a Redlock store needs of its {@link Redlock}'s settings, fixed when its builder
 * was made.
 *
 * @param clockDriftFactor the share of a lease allowed for clock drift
 * @param nodeTimeout the bound on each node's reply
 * @param requirePersistence whether only nodes whose data survives a restart vote
 */
record RedlockSettings(double clockDriftFactor, Duration nodeTimeout, boolean requirePersistence) {
}
