package io.lockstep.internal.engine;

import java.time.Duration;

import org.springframework.util.Assert;

/**
 * The engine's wait and hand-off timings, in one value: what the acquisitions wait for
 * and how long what they leave in the storage lives. Fixed in production
 * ({@link #DEFAULTS}); a test may shorten them.
 *
 * <p>
 * Two timings of waiting live with the parts that keep them: how long a key's
 * subscription lingers after its last local waiter, and how long an unclaimed hand-off
 * message is kept (the local queues); the Redis channel's re-subscribe delay lives with
 * the channel.
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
 */
record WaitPolicy(Duration queueEntry, Duration handOffGrant, Duration headRecheck, Duration firstPoll,
		Duration longestPoll) {

	/** The timings the engine runs with. */
	static final WaitPolicy DEFAULTS = new WaitPolicy(Duration.ofSeconds(2), Duration.ofSeconds(5),
			Duration.ofMillis(500), Duration.ofMillis(5), Duration.ofMillis(100));

	WaitPolicy {
		positive(queueEntry, "queueEntry");
		positive(handOffGrant, "handOffGrant");
		positive(headRecheck, "headRecheck");
		positive(firstPoll, "firstPoll");
		positive(longestPoll, "longestPoll");
		Assert.isTrue(firstPoll.compareTo(longestPoll) <= 0, "'firstPoll' must not be longer than 'longestPoll'");
	}

	private static void positive(Duration timing, String name) {
		Assert.isTrue(timing != null && timing.toMillis() > 0, () -> "'" + name + "' must be at least 1 ms");
	}

}
