package io.lockstep.test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Bounded polling of a condition, for checking a state that is reached asynchronously;
 * not a means of synchronisation.
 */
public final class Eventually {

	private Eventually() {
	}

	/**
	 * Polls the condition every 5 ms until it holds or the timeout passes.
	 * @return whether it held in time
	 */
	public static boolean holds(Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (condition.getAsBoolean()) {
				return true;
			}
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}
		return condition.getAsBoolean();
	}

}
