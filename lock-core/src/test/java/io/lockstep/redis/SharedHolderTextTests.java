package io.lockstep.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a key held by readers stores for each holder ({@code lib-shared.lua}): the scripts
 * write back the text of a holder they did not change as they read it, so every way of
 * changing a holder's lease must write its new fields, and only that holder's.
 */
@RedisTest
class SharedHolderTextTests {

	private static final String A = "0123456789abcdef0123456789abcdef";

	private static final String B = "fedcba9876543210fedcba9876543210";

	private final RedisNode redis;

	private ScriptRunner scripts;

	SharedHolderTextTests(RedisNode redis) {
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
	void eachChangeOfAReadersLeaseIsWrittenAndTheOtherReaderIsLeftAsItWas() {
		assertThat(this.scripts.shared(A, 10_000, "r", "", 0).get(0)).isEqualTo(1L);
		// the first holder's lease is the key's own until another joins (expiry 0)
		assertThat(holders().get(A)).containsExactly("0", "0");

		long before = serverMillis();
		assertThat(this.scripts.shared(B, 20_000, "r", "", 0).get(0)).isEqualTo(1L);
		long after = serverMillis();
		// the joining reader's script resolved the first holder's expiry from the key's
		// TTL
		assertThat(expiresOf(A)).isBetween(before + 9_000, after + 10_000);
		assertThat(expiresOf(B)).isBetween(before + 20_000, after + 20_000);

		String bAsItWas = part(B);
		before = serverMillis();
		assertThat(this.scripts.renew(A, 60_000)).isEqualTo(60_000L);
		after = serverMillis();
		assertThat(expiresOf(A)).as("A's renewal").isBetween(before + 60_000, after + 60_000);
		assertThat(part(B)).isEqualTo(bAsItWas);

		String aAsItWas = part(A);
		before = serverMillis();
		List<Long> again = this.scripts.shared(B, 90_000, "r", "", 0);
		after = serverMillis();
		assertThat(again).hasSize(3).element(2).isEqualTo(90_000L);
		assertThat(expiresOf(B)).as("B's repeated acquire").isBetween(before + 90_000, after + 90_000);
		assertThat(part(A)).isEqualTo(aAsItWas);

		bAsItWas = part(B);
		before = serverMillis();
		assertThat(this.scripts.keep(A, 5_000)).isEqualTo(1L);
		after = serverMillis();
		// kept: its lease and its cap end together
		assertThat(expiresOf(A)).as("A kept").isBetween(before + 5_000, after + 5_000);
		assertThat(holders().get(A).get(1)).isEqualTo(holders().get(A).get(0));
		assertThat(part(B)).isEqualTo(bAsItWas);
		assertThat(this.scripts.pttl()).isBetween(80_000L, 90_000L);
	}

	/** Each holder's fields after its owner: expiry and cap (delay left out). */
	private Map<String, List<String>> holders() {
		Map<String, List<String>> holders = new LinkedHashMap<>();
		String value = this.scripts.value();
		for (String part : value.substring(value.indexOf('|') + 1).split("\\|")) {
			String[] fields = part.split(",");
			holders.put(fields[0], List.of(fields[2], fields[3]));
		}
		return holders;
	}

	private long expiresOf(String owner) {
		return Long.parseLong(holders().get(owner).get(0));
	}

	private String part(String owner) {
		String value = this.scripts.value();
		for (String part : value.split("\\|")) {
			if (part.startsWith(owner + ",")) {
				return part;
			}
		}
		throw new AssertionError(owner + " holds no share of " + value);
	}

	private long serverMillis() {
		List<?> time = (List<?>) this.redis.call("TIME");
		return Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
	}

}
