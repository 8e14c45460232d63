package io.lockstep.cluster;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded polling of a condition (a check, not synchronisation). */
final class TestWaits {

	private TestWaits() {
	}

	static boolean until(Duration timeout, BooleanSupplier condition) {
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
