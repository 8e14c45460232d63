/**
 * The Redis Cluster backend: per-slot hash tags chosen by Lockstep, one fencing counter
 * per slot, scripts that never span two slots, sharded release notifications.
 */
package io.lockstep.cluster;
