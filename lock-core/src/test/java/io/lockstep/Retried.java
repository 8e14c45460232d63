package io.lockstep;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Calls a lock operation again while it fails with a {@link LockException}, as a caller
 * does where Redis may not answer for a moment (a restart, a connection being made): the
 * lock fails such a call at once rather than waiting. For tests and their worker JVMs.
 */
public final class Retried {

	private Retried() {
	}

	/**
	 * The call's result, calling again every {@code pause} while it fails, for up to
	 * {@code within}; then the last failure.
	 */
	public static <T> T call(Supplier<T> call, Duration within, Duration pause) {
		long deadline = System.nanoTime() + within.toNanos();
		while (true) {
			try {
				return call.get();
			}
			catch (LockException ex) {
				if (System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
					throw ex;
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pause.toMillis())); // a
																						// retry
																						// delay
			}
		}
	}

}
