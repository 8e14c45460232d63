package io.lockstep.sample;

import java.util.List;

import sun.misc.Signal;

/**
 * Ctrl+C (SIGINT) and SIGTERM are the sample's documented stop: on either, the JVM exits
 * with code 0 through {@link System#exit}, which runs Spring Boot's shutdown hook (the
 * graceful shutdown: requests in flight finish, the lock client closes, the embedded
 * Redis stops last) before the JVM ends. Left to the JVM, a signal ends it with 128 + the
 * signal's number (143 for SIGTERM), which {@code ./mvnw … spring-boot:run} reports as a
 * BUILD FAILURE although the sample stopped as it should. A failure to start still exits
 * non-zero.
 */
final class StopSignals {

	private StopSignals() {
	}

	static void exitZeroAfterShutdown() {
		for (String name : List.of("INT", "TERM")) {
			try {
				Signal.handle(new Signal(name), (signal) -> System.exit(0));
			}
			catch (IllegalArgumentException ex) {
				// the signal is not available on this platform, or the JVM reserves it
				// (-Xrs): its default stands
			}
		}
	}

}
