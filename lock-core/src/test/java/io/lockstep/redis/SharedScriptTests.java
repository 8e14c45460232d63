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
import static org.awaitility.Awaitility.await;

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

}
