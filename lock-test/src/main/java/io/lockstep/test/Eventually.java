package io.lockstep.test;

import java.time.Duration;
import java.util.function.BooleanSupplier;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Whether a state is reached asynchronously within a bound, as a value, for the tests
 * that measure or report it before they assert ({@code Awaitility.await()} asserts
 * directly); not a means of synchronisation.
 */
public final class Eventually {

	private Eventually() {
	}

	/**
	 * Checks the condition every 5 ms (Awaitility) until it holds or the timeout passes.
	 * @return whether it held in time
	 */
	public static boolean holds(Duration timeout, BooleanSupplier condition) {
		try {
			Awaitility.await()
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(5))
				.atMost(timeout)
				.until(condition::getAsBoolean);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return condition.getAsBoolean();
		}
	}

}
