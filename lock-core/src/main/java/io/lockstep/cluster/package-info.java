/**
 * The Redis Cluster backend: per-slot hash tags chosen by Lockstep, one fencing counter
 * per slot, scripts that never span two slots, sharded release notifications.
 */
@NullMarked
package io.lockstep.cluster;

import org.jspecify.annotations.NullMarked;
