package io.lockstep.redis;

import java.time.Duration;

import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;

/** Whether a key was found at each check, every 50 ms for a while. */
record Presence(int checks, int present, long firstMissingMillis) {

	static Presence watch(RedisNode redis, String key, Duration duration) {
		long start = System.nanoTime();
		long end = start + duration.toNanos();
		int checks = 0;
		int present = 0;
		long firstMissing = -1;
		while (System.nanoTime() < end) {
			if (TestLocks.exists(redis, key)) {
				present++;
			}
			else if (firstMissing < 0) {
				firstMissing = (System.nanoTime() - start) / 1_000_000;
			}
			checks++;
			Eventually.holds(Duration.ofMillis(50), () -> false);
		}
		return new Presence(checks, present, firstMissing);
	}

	@Override
	public String toString() {
		return this.present + " of " + this.checks + " checks"
				+ ((this.firstMissingMillis >= 0) ? ", first missing after " + this.firstMissingMillis + " ms" : "");
	}

}
