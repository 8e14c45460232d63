package io.lockstep.redis;

import java.util.ArrayList;
import java.util.List;

import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts write fencing tokens into a key's value in decimal digits, in two halves of
 * at most eight digits ({@code decimal} in {@code lib.lua}, and inline in
 * {@code acquire-plain.lua}): every token, on both sides of each half's boundary and up
 * to the largest a Lua number holds exactly, must read back as the integer Redis counted,
 * on the plain path (no max hold) and the general one (a max hold, whose cap is written
 * alike).
 */
@RedisTest
class FenceDigitsTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	/** Counters before the increment: tokens one above each. */
	private static final List<Long> COUNTERS = List.of(1L, 2L, 9L, 41L, 99_999_997L, 99_999_998L, 99_999_999L,
			100_000_000L, 100_000_006L, 199_999_999L, 1_000_000_000L, 1_764_000_002_399_999L, 1_764_000_002_400_000L,
			(1L << 31) - 2, (1L << 31) - 1, (1L << 32), 9_999_999_999_999_999L / 10_000, (1L << 53) - 2);

	private final RedisNode redis;

	private ScriptRunner scripts;

	FenceDigitsTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.scripts = new ScriptRunner(this.redis);
	}

	@AfterEach
	void disconnect() {
		this.scripts.close();
	}

	@Test
	void everyTokenIsWrittenAsTheIntegerRedisCounted() {
		List<String> wrong = new ArrayList<>();
		long capped = 0;
		for (long counter : COUNTERS) {
			for (boolean maxHold : List.of(false, true)) {
				this.redis.call("FLUSHALL");
				this.redis.call("SET", "fence", Long.toString(counter));
				List<Long> reply = this.scripts.eval(LockScripts.ACQUIRE, List.of("k", "fence"),
						List.of(OWNER, "30000", maxHold ? "60000" : "0"));
				long token = (reply.size() == 1) ? reply.get(0) : reply.get(1);
				String value = String.valueOf(this.redis.call("GET", "k"));
				String[] parts = value.split(":");
				if (token != counter + 1 || !value.startsWith(OWNER + ":" + (counter + 1) + ":")) {
					wrong.add(counter + (maxHold ? " (max hold)" : "") + ": token " + token + ", value " + value);
				}
				if (maxHold) {
					// the cap, server time in ms + 60 s, written the same way
					long cap = Long.parseLong(parts[2]);
					long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
					if (cap < now || cap > now + 61_000) {
						wrong.add(counter + ": cap " + parts[2] + " is not now + 60 s (" + now + ")");
					}
					capped++;
				}
			}
		}
		System.out.printf("fencing tokens: %d of %d written as counted (%d with a cap)%n",
				2 * COUNTERS.size() - wrong.size(), 2 * COUNTERS.size(), capped);
		assertThat(wrong).isEmpty();
	}

}
