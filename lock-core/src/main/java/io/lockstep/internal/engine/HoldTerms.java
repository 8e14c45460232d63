package io.lockstep.internal.engine;

/**
 * The hold a caller asks for, as its template copy settles it.
 *
 * @param leaseNanos the lease
 * @param renewed whether the watchdog renews the lease (else it is fixed)
 * @param minHoldNanos how long after acquisition the keys stay taken when released
 * earlier, or 0
 * @param delayMillis the lock delay: how long the keys stay unavailable after a lease
 * that ends without a release (stored with the grant, counted from the lease's end in the
 * storage), or 0
 */
record HoldTerms(long leaseNanos, boolean renewed, long minHoldNanos, long delayMillis) {
}
