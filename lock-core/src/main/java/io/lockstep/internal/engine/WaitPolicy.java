package io.lockstep.internal.engine;

import java.time.Duration;

import org.springframework.util.Assert;

/**
 * The engine's wait and hand-off timings, in one value: what the acquisitions wait for
 * and how long what they leave in the storage lives. Fixed in production
 * ({@link #DEFAULTS}); a test may shorten them.
 *
 * <p>
 * The Redis channel's re-subscribe delay after a failed subscription lives with the
 * channel (a connection's retry, not a wait of the engine's).
 *
 * @param queueEntry how long a queue entry in the storage lives unless its waiter asks
 * again (so that a waiter that vanished holds up the key no longer)
 * @param handOffGrant the longest lease a hand-off grants a waiter whose lease is renewed
 * (a watchdog lease): its watchdog extends it once it has the lock, and a waiter that
 * vanished after it queued holds the lock up no longer than this (a {@link Lease} renews
 * such a short first grant early); a fixed lease is handed off whole
 * @param headRecheck the longest a key's local head waits before it asks again while
 * release notifications work, in case one was lost
 * @param firstPoll how long a head waits first when release notifications do not work (it
 * then polls, doubling the wait, jittered)
 * @param longestPoll the longest wait of a polling head
 * @param local how long the local queues keep what may serve a waiter soon
 */
record WaitPolicy(Duration queueEntry, Duration handOffGrant, Duration headRecheck, Duration firstPoll,
		Duration longestPoll, LocalKeeping local) {

	/** The timings the engine runs with. */
	static final WaitPolicy DEFAULTS = new WaitPolicy(Duration.ofSeconds(2), Duration.ofSeconds(5),
			Duration.ofMillis(500), Duration.ofMillis(5), Duration.ofMillis(100),
			new LocalKeeping(Duration.ofSeconds(5), Duration.ofSeconds(30)));

	/**
	 * How long the local queues keep what may serve a waiter soon.
	 *
	 * @param linger how long a key stays subscribed after its last local waiter left (its
	 * waiters may come back soon)
	 * @param unclaimedHandOff how long a hand-off message waits for its waiter to
	 * register: far longer than the gap between an attempt's reply and the registration
	 * (a caller that never registers left the queue and released what was handed to it)
	 */
	record LocalKeeping(Duration linger, Duration unclaimedHandOff) {

		LocalKeeping {
			positive(linger, "linger");
			positive(unclaimedHandOff, "unclaimedHandOff");
		}

	}

	WaitPolicy {
		positive(queueEntry, "queueEntry");
		positive(handOffGrant, "handOffGrant");
		positive(headRecheck, "headRecheck");
		positive(firstPoll, "firstPoll");
		positive(longestPoll, "longestPoll");
		Assert.notNull(local, "'local' must not be null");
		Assert.isTrue(firstPoll.compareTo(longestPoll) <= 0, "'firstPoll' must not be longer than 'longestPoll'");
	}

	private static void positive(Duration timing, String name) {
		Assert.isTrue(timing != null && timing.toMillis() > 0, () -> "'" + name + "' must be at least 1 ms");
	}

}
