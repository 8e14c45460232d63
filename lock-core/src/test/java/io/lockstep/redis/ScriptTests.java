package io.lockstep.redis;

import java.time.Duration;
import java.util.List;

import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lettuce.core.RedisClient;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lua scripts on their own: idempotent for one owner token, owner-checked for
 * everyone else.
 */
@RedisTest
class ScriptTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private static final String OTHER = "fedcba9876543210fedcba9876543210";

	private final RedisNode redis;

	private RedisClient client;

	private LockCommands commands;

	ScriptTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.commands = new LockCommands(this.client, Duration.ofSeconds(2));
		this.redis.call("FLUSHALL");
	}

	@AfterEach
	void disconnect() {
		this.commands.close();
		this.client.shutdown();
	}

	private List<Long> acquire(String owner, String lease) {
		return this.commands.eval(LockScripts.ACQUIRE, List.of("k", "fence"), List.of(owner, lease, "0"), "acquire");
	}

	@Test
	void aReplayedAcquireByTheSameOwnerReturnsTheSameFencingTokenAndCreatesNothing() {
		List<Long> first = acquire(OWNER, "10000");
		List<Long> replay = acquire(OWNER, "20000");
		assertThat(first.get(0)).isEqualTo(1L);
		// the token it was granted with, and the lease now set
		assertThat(replay).isEqualTo(List.of(1L, first.get(1), 20_000L));
		assertThat(this.redis.call("DBSIZE")).isEqualTo(2L); // the lock and the fencing
																// counter
		assertThat((Long) this.redis.call("PTTL", "k")).isGreaterThan(10_000L);
		List<Long> other = acquire(OTHER, "10000");
		assertThat(other.get(0)).isZero();
		assertThat(other.get(1)).isBetween(10_000L, 20_000L);
		// the fencing counter as the attempt left it: above the token granted
		assertThat(other.get(3)).isGreaterThan(first.get(1));
	}

	@Test
	void releaseAndRenewLeaveAnotherOwnersKeyAlone() {
		acquire(OTHER, "10000");
		String value = (String) this.redis.call("GET", "k");
		long released = this.commands.eval(LockScripts.RELEASE, List.of("k"), List.of(OWNER), "release");
		List<Long> renewed = this.commands.eval(LockScripts.RENEW, List.of("k"), List.of(OWNER, "99999"), "renew");
		assertThat(released).isZero();
		assertThat(renewed).containsExactly(0L);
		assertThat(this.redis.call("GET", "k")).isEqualTo(value);
		assertThat((Long) this.redis.call("PTTL", "k")).isLessThanOrEqualTo(10_000L);
		// a token that is a prefix of the owner's is not the owner
		long prefixRelease = this.commands.eval(LockScripts.RELEASE, List.of("k"), List.of(OTHER.substring(0, 8)),
				"release");
		assertThat(prefixRelease).isZero();
		assertThat(this.redis.call("EXISTS", "k")).isEqualTo(1L);
	}

	@Test
	void theOwnerTokensAre128RandomBits() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build()) {
			java.util.Set<String> tokens = new java.util.HashSet<>();
			for (int i = 0; i < 1_000; i++) {
				try (var lock = locks.acquire("t" + (i % 10))) {
					tokens.add(((String) this.redis.call("GET", lock.key())).split(":")[0]);
				}
			}
			assertThat(tokens).hasSize(1_000).allMatch((token) -> token.matches("[0-9a-f]{32}"));
		}
	}

}
