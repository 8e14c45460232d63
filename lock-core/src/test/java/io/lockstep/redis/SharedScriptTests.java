package io.lockstep.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared-holder scripts on their own (EVALSHA), for the invariants the engine relies
 * on.
 */
@RedisTest
class SharedScriptTests {

	private static final String A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	private static final String B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

	private static final String W = "cccccccccccccccccccccccccccccccc";

	private final RedisNode redis;

	private RedisClient client;

	private LockCommands commands;

	SharedScriptTests(RedisNode redis) {
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

	private List<Long> read(String owner, long lease) {
		return this.commands.eval(LockScripts.ACQUIRE_SHARED, List.of("k", "fence", "q", "t"),
				List.of(owner, Long.toString(lease), "0", "r", "w"), "read");
	}

	private List<Long> queueWriter(String owner) {
		return this.commands.eval(LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"),
				List.of(owner, "30000", "0", "n", "5000", "chan", "30000"), "write");
	}

	private long release(String owner) {
		return this.commands.eval(LockScripts.RELEASE, List.of("k", "q", "t", "fence"),
				List.of(owner, "released", "PUBLISH", "queues", ""), "release");
	}

	private long renew(String owner, long lease) {
		List<Long> reply = this.commands.eval(LockScripts.RENEW, List.of("k"), List.of(owner, Long.toString(lease)),
				"renew");
		return reply.get(0);
	}

	private long check(String owner) {
		return this.commands.<Long>eval(LockScripts.CHECK, List.of("k"), List.of(owner), "check");
	}

	@Test
	void aQueuedWriterIsHandedTheKeyOnlyWhenTheLastLiveReaderLeaves() {
		assertThat(read(A, 30_000).get(0)).isEqualTo(1L);
		assertThat(read(B, 30_000).get(0)).isEqualTo(1L);
		assertThat(queueWriter(W).get(0)).isZero();
		// a third reader waits behind the queued writer
		assertThat(read("dddddddddddddddddddddddddddddddd", 30_000).get(0)).isZero();
		assertThat(release(A)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).startsWith("r|" + B);
		assertThat(release(B)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).startsWith(W + ":");
	}

	@Test
	void aFirstReadersShareEndsWithItsOwnLeaseAndIsNeitherExtendedByAJoinerNorResurrectedByARenewal() throws Exception {
		assertThat(read(A, 300).get(0)).isEqualTo(1L);
		assertThat(read(B, 30_000).get(0)).isEqualTo(1L);
		assertThat((Long) this.redis.call("PTTL", "k")).isGreaterThan(25_000L);
		Thread.sleep(400); // A's lease of 300 ms runs out (the point of the test, not
							// synchronisation)
		assertThat(check(A)).isZero();
		assertThat(check(B)).isEqualTo(1L);
		assertThat(renew(A, 30_000)).isZero();
		assertThat(renew(B, 30_000)).isGreaterThan(0L);
		assertThat((String) this.redis.call("GET", "k")).doesNotContain(A);
		assertThat(release(A)).isZero();
	}

	@Test
	void fencingTokensNear1point8e15StayExactAcrossModes() {
		this.redis.call("SET", "fence", "1799999999999998");
		List<Long> first = read(A, 30_000);
		List<Long> second = read(B, 30_000);
		assertThat(first.get(1)).isEqualTo(1_799_999_999_999_999L);
		assertThat(second.get(1)).isEqualTo(1_800_000_000_000_000L);
		assertThat((String) this.redis.call("GET", "k")).contains(A + ",1799999999999999,")
			.contains(B + ",1800000000000000,");
		queueWriter(W);
		release(A);
		release(B);
		assertThat((String) this.redis.call("GET", "k")).startsWith(W + ":1800000000000002:");
	}

}
