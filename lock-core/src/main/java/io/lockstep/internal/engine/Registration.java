package io.lockstep.internal.engine;

import java.util.concurrent.CompletableFuture;

/**
 * A waiter and its subscription.
 *
 * @param waiter the waiter
 * @param listening completes when notifications of the key flow
 */
record Registration(Waiter waiter, CompletableFuture<?> listening) {
}
