/**
 * Real {@code redis-server} processes for tests: standalone nodes, independent masters,
 * replicas, Sentinel and Cluster, each of which can be paused, resumed, killed and
 * restarted.
 */
package io.lockstep.test;
