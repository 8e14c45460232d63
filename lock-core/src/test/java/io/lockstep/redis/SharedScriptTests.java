package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shared-holder scripts on their own (EVALSHA), for the invariants the engine relies
 * on. A holder's text that a script did not change is written back as it was read
 * ({@code lib-shared.lua}), so every change of a holder's lease must write its new
 * fields, and only that holder's; a release that frees a key lets in the waiters for a
 * share first in its queue ({@code admitShares} in {@code lib-release.lua}).
 */
@RedisTest
class SharedScriptTests {

	private static final String A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	private static final String B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

	private static final String W = "cccccccccccccccccccccccccccccccc";

	private final RedisNode redis;

	private ScriptRunner scripts;

	SharedScriptTests(RedisNode redis) {
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
	void aQueuedWriterIsHandedTheKeyOnlyWhenTheLastLiveReaderLeaves() {
		assertThat(this.scripts.read(A, 30_000).get(0)).isEqualTo(1L);
		assertThat(this.scripts.read(B, 30_000).get(0)).isEqualTo(1L);
		assertThat(this.scripts.queueWriter(W).get(0)).isZero();
		// a third reader waits behind the queued writer
		assertThat(this.scripts.read("dddddddddddddddddddddddddddddddd", 30_000).get(0)).isZero();
		assertThat(this.scripts.release(A)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).startsWith("r|" + B);
		assertThat(this.scripts.release(B)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).startsWith(W + ":");
	}

	@Test
	void aFirstReadersShareEndsWithItsOwnLeaseAndIsNeitherExtendedByAJoinerNorResurrectedByARenewal() throws Exception {
		assertThat(this.scripts.read(A, 300).get(0)).isEqualTo(1L);
		assertThat(this.scripts.read(B, 30_000).get(0)).isEqualTo(1L);
		assertThat((Long) this.redis.call("PTTL", "k")).isGreaterThan(25_000L);
		assertThat(this.scripts.check(A)).isOne();
		// A's lease of 300 ms runs out (the point of the test)
		await().atMost(Duration.ofSeconds(2)).until(() -> this.scripts.check(A) == 0);
		assertThat(this.scripts.check(B)).isEqualTo(1L);
		assertThat(this.scripts.renew(A, 30_000)).isZero();
		assertThat(this.scripts.renew(B, 30_000)).isGreaterThan(0L);
		assertThat((String) this.redis.call("GET", "k")).doesNotContain(A);
		assertThat(this.scripts.release(A)).isZero();
	}

	@Test
	void fencingTokensNear1point8e15StayExactAcrossModes() {
		this.redis.call("SET", "fence", "1799999999999998");
		List<Long> first = this.scripts.read(A, 30_000);
		List<Long> second = this.scripts.read(B, 30_000);
		assertThat(first.get(1)).isEqualTo(1_799_999_999_999_999L);
		assertThat(second.get(1)).isEqualTo(1_800_000_000_000_000L);
		assertThat((String) this.redis.call("GET", "k")).contains(A + ",1799999999999999,")
			.contains(B + ",1800000000000000,");
		this.scripts.queueWriter(W);
		this.scripts.release(A);
		this.scripts.release(B);
		assertThat((String) this.redis.call("GET", "k")).startsWith(W + ":1800000000000002:");
	}

	@Test
	void eachChangeOfAReadersLeaseIsWrittenAndTheOtherReaderIsLeftAsItWas() {
		assertThat(this.scripts.shared(A, 10_000, "r", "", 0).get(0)).isEqualTo(1L);
		// the first holder's lease is the key's own until another joins (expiry 0)
		assertThat(leases().get(A)).containsExactly("0", "0");

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
		assertThat(leases().get(A).get(1)).isEqualTo(leases().get(A).get(0));
		assertThat(part(B)).isEqualTo(bAsItWas);
		assertThat(this.scripts.pttl()).isBetween(80_000L, 90_000L);
	}

	@Test
	void theKeysTtlIsTheLatestLeaseEndOfItsHoldersAlsoWhenAHoldersLeaseIsShortened() {
		assertThat(this.scripts.shared(A, 30_000, "r", "", 0).get(0)).isEqualTo(1L);
		assertThat(this.scripts.shared(B, 60_000, "r", "", 0).get(0)).isEqualTo(1L);
		assertThat(this.scripts.pttl()).isGreaterThan(55_000L);
		// B's renewal asks for less than its lease has left: A's lease ends last now
		assertThat(this.scripts.renew(B, 5_000)).isEqualTo(5_000L);
		assertThat(this.scripts.pttl()).as("after B's shorter renewal").isBetween(25_000L, 30_000L);
		// A's repeated acquire shortens its lease: B's ends last
		assertThat(this.scripts.shared(A, 2_000, "r", "", 0)).hasSize(3);
		assertThat(this.scripts.pttl()).as("after A's shorter repeated acquire").isBetween(3_000L, 5_000L);
	}

	@Test
	void aWritersReleaseLetsInTheReadersBeforeTheNextLiveWriterAndDropsTheDeadEntries() {
		long now = serverMillis();
		this.redis.call("SET", "k", W + ":5:0:w", "PX", "30000");
		this.redis.call("SET", "fence", "5");
		queue("r1", now + 5_000, "r");
		queue("r2", now - 1, "r"); // its entry expired
		this.redis.call("RPUSH", "q", "r3"); // its entry gone
		queue("r4", now + 5_000, "r");
		this.redis.call("RPUSH", "q", "r4"); // queued twice
		queue("w2", now + 5_000, "x");
		queue("r5", now + 5_000, "r");

		assertThat(this.scripts.release(W)).isEqualTo(1L);

		assertThat(holders()).containsExactly("r1", "r4");
		assertThat(this.redis.call("LRANGE", "q", "0", "-1")).isEqualTo(List.of("w2", "r5"));
		assertThat(fields()).containsExactlyInAnyOrder("w2", "r5");
		// each let in with a token of its own, above the writer's
		assertThat(this.scripts.value()).contains("|r1,6,", "|r4,7,");
	}

	@Test
	void aPermitHoldersReleaseLetsInAsManyAsTheSemaphoreHasRoomFor() {
		long now = serverMillis();
		this.redis.call("SET", "k", "s3|" + W + ",5," + (now + 30_000) + ",0|other,4," + (now + 30_000) + ",0:w", "PX",
				"30000");
		this.redis.call("SET", "fence", "5");
		queue("p1", now - 1, "s3"); // its entry expired
		queue("p2", now + 5_000, "s3");
		queue("p3", now + 5_000, "s3");
		queue("p4", now + 5_000, "s3");

		assertThat(this.scripts.release(W)).isEqualTo(1L);

		// 3 permits: the other holder and two let in
		assertThat(holders()).containsExactly("other", "p2", "p3");
		assertThat(this.redis.call("LRANGE", "q", "0", "-1")).isEqualTo(List.of("p4"));
		assertThat(fields()).containsExactly("p4");
	}

	/** Queues a waiter whose entry lives until {@code expires}. */
	private void queue(String owner, long expires, String kind) {
		this.redis.call("RPUSH", "q", owner);
		this.redis.call("HSET", "t", owner, expires + ":30000:0:" + kind + ":chan");
	}

	/** The key's holders, in the value's order. */
	private List<String> holders() {
		return new ArrayList<>(leases().keySet());
	}

	private List<String> fields() {
		List<String> fields = new ArrayList<>();
		for (Object field : (List<?>) this.redis.call("HKEYS", "t")) {
			fields.add((String) field);
		}
		return fields;
	}

	/** Each holder's expiry and cap after its owner (a delay left out). */
	private Map<String, List<String>> leases() {
		Map<String, List<String>> holders = new LinkedHashMap<>();
		String value = this.scripts.value();
		for (String part : value.substring(value.indexOf('|') + 1).split("\\|")) {
			String[] fields = part.split(",");
			holders.put(fields[0], List.of(fields[2], fields[3]));
		}
		return holders;
	}

	private long expiresOf(String owner) {
		return Long.parseLong(leases().get(owner).get(0));
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
