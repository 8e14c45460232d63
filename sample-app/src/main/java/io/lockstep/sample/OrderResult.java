package io.lockstep.sample;

/**
 * The outcome of one order.
 *
 * @param sku the product
 * @param quantity units ordered
 * @param accepted whether the stock covered it
 * @param stockLeft the stock after this order, as this order saw it
 * @param instance the (simulated) service instance that took the order
 * @param fencingToken the fencing token of the lock it ran under, or -1 without a lock
 * @param enteredAtNanos {@link System#nanoTime()} when the order's transaction began: the
 * time before it is spent waiting for the lock
 */
public record OrderResult(String sku, int quantity, boolean accepted, int stockLeft, String instance, long fencingToken,
		long enteredAtNanos) {
}
