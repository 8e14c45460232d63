package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lua scripts on their own: idempotent for one owner token, owner-checked for
 * everyone else, and exact in the integers they write.
 */
@RedisTest
class ScriptTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private static final String OTHER = "fedcba9876543210fedcba9876543210";

	/** Counters before the increment: tokens one above each. */
	private static final List<Long> COUNTERS = List.of(1L, 2L, 9L, 41L, 99_999_997L, 99_999_998L, 99_999_999L,
			100_000_000L, 100_000_006L, 199_999_999L, 1_000_000_000L, 1_764_000_002_399_999L, 1_764_000_002_400_000L,
			(1L << 31) - 2, (1L << 31) - 1, (1L << 32), 9_999_999_999_999_999L / 10_000, (1L << 53) - 2);

	private final RedisNode redis;

	private ScriptRunner scripts;

	ScriptTests(RedisNode redis) {
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
	void aReplayedAcquireByTheSameOwnerReturnsTheSameFencingTokenAndCreatesNothing() {
		List<Long> first = this.scripts.acquire(OWNER, "10000");
		List<Long> replay = this.scripts.acquire(OWNER, "20000");
		assertThat(first.get(0)).isEqualTo(1L);
		// the token it was granted with, and the lease now set
		assertThat(replay).isEqualTo(List.of(1L, first.get(1), 20_000L));
		assertThat(this.redis.call("DBSIZE")).isEqualTo(2L); // the lock and the fencing
																// counter
		assertThat((Long) this.redis.call("PTTL", "k")).isGreaterThan(10_000L);
		List<Long> other = this.scripts.acquire(OTHER, "10000");
		assertThat(other.get(0)).isZero();
		assertThat(other.get(1)).isBetween(10_000L, 20_000L);
		// the fencing counter as the attempt left it: above the token granted
		assertThat(other.get(3)).isGreaterThan(first.get(1));
	}

	@Test
	void aReleaseNamingASuccessorHandsItTheKeyOnlyWhenNoOneIsQueuedForIt() {
		String successor = "00000000000000000000000000000001";
		for (long counter : List.of(41L, 99_999_999L, 1_764_000_002_399_999L)) {
			this.redis.call("FLUSHALL");
			this.scripts.acquire(OWNER, "30000");
			this.redis.call("SET", "fence", Long.toString(counter));
			// unmarked: handed for the successor's hand-off lease, the token negated in
			// the reply
			assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isEqualTo(-(counter + 1));
			assertThat(this.redis.call("GET", "k")).isEqualTo(successor + ":" + (counter + 1) + ":0");
			assertThat((Long) this.redis.call("PTTL", "k")).isBetween(4000L, 5000L);
			// the successor's own attempt finds the lock its own, with the token handed
			assertThat(this.scripts.acquire(successor, "30000")).isEqualTo(List.of(1L, counter + 1, 30_000L));
		}
		// marked, a waiter queued: the key goes to it as without a successor
		this.redis.call("FLUSHALL");
		this.scripts.acquire(OWNER, "30000");
		this.scripts.queueWriter(OTHER);
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).startsWith(OTHER + ":").endsWith(":0:w");
		// marked, the waiter gone: handed to the successor, the mark kept
		this.scripts.leave(OTHER);
		assertThat(this.redis.call("EXISTS", "k")).isEqualTo(0L);
		this.scripts.acquire(OWNER, "30000");
		this.scripts.queueWriter(OTHER);
		this.scripts.leave(OTHER);
		assertThat(this.redis.call("LLEN", "q")).isEqualTo(0L);
		long fence = Long.parseLong((String) this.redis.call("GET", "fence"));
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isEqualTo(-(fence + 1));
		assertThat(this.redis.call("GET", "k")).isEqualTo(successor + ":" + (fence + 1) + ":0:w");
		// another owner's key: left alone
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isZero();
		assertThat(this.redis.call("GET", "k")).isEqualTo(successor + ":" + (fence + 1) + ":0:w");
		// unmarked, with a live entry of the successor's own left by an earlier attempt:
		// handed, the entry taken off (its release would otherwise hand the key to it
		// again)
		this.redis.call("FLUSHALL");
		this.scripts.acquire(OWNER, "30000");
		this.redis.call("RPUSH", "q", successor);
		this.redis.call("HSET", "t", successor, (System.currentTimeMillis() + 60_000) + ":5000:0:x:chan");
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isNegative();
		assertThat(this.redis.call("LLEN", "q")).isEqualTo(0L);
		assertThat(this.redis.call("HEXISTS", "t", successor)).isEqualTo(0L);
		// marked for a writer on several keys, no one queued: the writer's, not the
		// successor's
		this.redis.call("FLUSHALL");
		this.scripts.acquire(OWNER, "30000");
		this.redis.call("SET", "k", this.redis.call("GET", "k") + ":w", "KEEPTTL");
		this.redis.call("HSET", "t", "~w", OTHER + ":" + (System.currentTimeMillis() + 60_000));
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isEqualTo(1L);
		assertThat(this.redis.call("GET", "k")).isEqualTo("~w:" + OTHER + ":w");
		// the fencing counter missing: freed, and the counter seeded above every token
		this.redis.call("FLUSHALL");
		this.scripts.acquire(OWNER, "30000");
		this.redis.call("DEL", "fence");
		assertThat(this.scripts.releaseTo(OWNER, successor, 5000)).isEqualTo(1L);
		assertThat(this.redis.call("EXISTS", "k")).isEqualTo(0L);
		assertThat(Long.parseLong((String) this.redis.call("GET", "fence"))).isGreaterThan(1L);
	}

	@Test
	void releaseAndRenewLeaveAnotherOwnersKeyAlone() {
		this.scripts.acquire(OTHER, "10000");
		String value = (String) this.redis.call("GET", "k");
		long released = this.scripts.release(OWNER);
		List<Long> renewed = this.scripts.eval(LockScripts.RENEW, List.of("k"), List.of(OWNER, "99999"));
		assertThat(released).isZero();
		assertThat(renewed).containsExactly(0L);
		assertThat(this.redis.call("GET", "k")).isEqualTo(value);
		assertThat((Long) this.redis.call("PTTL", "k")).isLessThanOrEqualTo(10_000L);
		// a token that is a prefix of the owner's is not the owner
		long prefixRelease = this.scripts.release(OTHER.substring(0, 8));
		assertThat(prefixRelease).isZero();
		assertThat(this.redis.call("EXISTS", "k")).isEqualTo(1L);
	}

	@Test
	void theOwnerTokensAre128RandomBits() {
		try (RedisLockTemplate locks = TestLocks.builder(this.scripts.client()).build()) {
			java.util.Set<String> tokens = new java.util.HashSet<>();
			for (int i = 0; i < 1_000; i++) {
				try (var lock = locks.acquire("t" + (i % 10))) {
					tokens.add(((String) this.redis.call("GET", lock.key())).split(":")[0]);
				}
			}
			assertThat(tokens).hasSize(1_000).allMatch((token) -> token.matches("[0-9a-f]{32}"));
		}
	}

	/**
	 * A fencing counter lost between a grant and the next (evicted, or a Redis restarted
	 * without persistence while the key lived on) starts again from the server clock: the
	 * hand-off that follows, in the same millisecond, still issues a larger token than
	 * the grant before it. Both run in one MULTI so that they share a millisecond.
	 */
	@Test
	void aFencingCounterLostBetweenAGrantAndAHandOffStillIssuesALargerToken() {
		this.scripts.acquire(OWNER, 10_000, 0, "", 0);
		this.scripts.release(OWNER);
		LockScripts.Call release = LockScripts.release(LockId.of("k"), List.of("k"), OWNER, "PUBLISH",
				new LockScripts.Queues(List.of("q"), List.of("t"), List.of("fence")), false);
		int larger = 0;
		int rounds = 20;
		try (StatefulRedisConnection<String, String> connection = this.scripts.client().connect()) {
			RedisCommands<String, String> redis = connection.sync();
			for (int i = 0; i < rounds; i++) {
				redis.del("k", "q", "t", "fence");
				redis.multi();
				redis.evalsha(LockScripts.ACQUIRE.getSha1(), ScriptOutputType.MULTI, new String[] { "k", "fence" },
						OWNER, "10000");
				redis.evalsha(LockScripts.ACQUIRE.getSha1(), ScriptOutputType.MULTI,
						new String[] { "k", "fence", "q", "t" }, OTHER, "10000", "n:5000:10000:chan");
				redis.del("fence");
				redis.evalsha(release.script().getSha1(), ScriptOutputType.INTEGER,
						release.keys().toArray(String[]::new), release.args().toArray(String[]::new));
				io.lettuce.core.TransactionResult replies = redis.exec();
				long granted = (Long) ((List<?>) replies.get(0)).get(1);
				String handed = this.scripts.value();
				long next = Long.parseLong(handed.split(":")[1]);
				if (i == 0) {
					System.out.printf("granted fencing token %d, counter lost, handed off with %d%n", granted, next);
				}
				assertThat(handed).startsWith(OTHER + ":");
				if (next > granted) {
					larger++;
				}
			}
		}
		assertThat(larger).as("hand-offs with a larger token than the grant before").isEqualTo(rounds);
	}

	/**
	 * A script's error names the file and line it comes from, not only the line of the
	 * library and script together that Redis runs.
	 */
	@Test
	void aScriptErrorNamesTheFileAndLine() throws Exception {
		int line = lineOf("acquire", "'NX', 'PX', lease + delay");
		// a lease that is not a number, with a max hold (not the plain path): arithmetic
		// on nil where the key is set
		org.assertj.core.api.Assertions.assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> this.scripts.eval(LockScripts.ACQUIRE, List.of("k", "fence"),
					List.of(OWNER, "soon", "", "1000")))
			.satisfies((ex) -> System.out.println("script error: " + ex.getMessage()))
			.withMessageContaining("(acquire.lua:" + line + ")");
		// the same in the plain path, which comes before the libraries: Redis refuses the
		// expiry
		int plainLine = lineOf("acquire-plain", "redis.call('SET'");
		org.assertj.core.api.Assertions.assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> this.scripts.acquire(OWNER, "soon"))
			.satisfies((ex) -> System.out.println("script error: " + ex.getMessage()))
			.withMessageContaining("(acquire-plain.lua:" + plainLine + ")");
	}

	/** The number of the first line of {@code <name>.lua} that contains {@code text}. */
	private static int lineOf(String name, String text) throws java.io.IOException {
		List<String> lines = new org.springframework.core.io.ClassPathResource("io/lockstep/redis/" + name + ".lua")
			.getContentAsString(java.nio.charset.StandardCharsets.UTF_8)
			.lines()
			.toList();
		return 1 + lines.indexOf(lines.stream().filter((line) -> line.contains(text)).findFirst().orElseThrow());
	}

	/**
	 * The scripts write fencing tokens into a key's value in decimal digits, in two
	 * halves of at most eight digits ({@code decimal} in {@code lib.lua}, and inline in
	 * {@code acquire-plain.lua}): every token, on both sides of each half's boundary and
	 * up to the largest a Lua number holds exactly, reads back as the integer Redis
	 * counted, on the plain path (no max hold) and the general one (a max hold, whose cap
	 * is written alike).
	 */
	@Test
	void everyTokenIsWrittenAsTheIntegerRedisCounted() {
		List<String> wrong = new ArrayList<>();
		long capped = 0;
		for (long counter : COUNTERS) {
			for (boolean maxHold : List.of(false, true)) {
				this.redis.call("FLUSHALL");
				this.redis.call("SET", "fence", Long.toString(counter));
				List<Long> reply = this.scripts.eval(LockScripts.ACQUIRE, List.of("k", "fence"),
						List.of(OWNER, "30000", "", maxHold ? "60000" : "0"));
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
