package io.lockstep.redis;

import java.util.ArrayList;
import java.util.List;

import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A release that frees a key lets in the waiters for a share first in its queue
 * ({@code admitShares} in {@code lib-release.lua}): the readers up to the first live
 * writer, as many permit holders as the semaphore has room for, the dead entries before
 * and among them dropped, a token queued twice let in once.
 */
@RedisTest
class SharesLetInTests {

	private static final String WRITER = "0123456789abcdef0123456789abcdef";

	private final RedisNode redis;

	private ScriptRunner scripts;

	SharesLetInTests(RedisNode redis) {
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
	void aWritersReleaseLetsInTheReadersBeforeTheNextLiveWriterAndDropsTheDeadEntries() {
		long now = serverMillis();
		this.redis.call("SET", "k", WRITER + ":5:0:w", "PX", "30000");
		this.redis.call("SET", "fence", "5");
		queue("r1", now + 5_000, "r");
		queue("r2", now - 1, "r"); // its entry expired
		this.redis.call("RPUSH", "q", "r3"); // its entry gone
		queue("r4", now + 5_000, "r");
		this.redis.call("RPUSH", "q", "r4"); // queued twice
		queue("w2", now + 5_000, "x");
		queue("r5", now + 5_000, "r");

		assertThat(this.scripts.release(WRITER)).isEqualTo(1L);

		assertThat(holders()).containsExactly("r1", "r4");
		assertThat(this.redis.call("LRANGE", "q", "0", "-1")).isEqualTo(List.of("w2", "r5"));
		assertThat(fields()).containsExactlyInAnyOrder("w2", "r5");
		// each let in with a token of its own, above the writer's
		assertThat(this.scripts.value()).contains("|r1,6,", "|r4,7,");
	}

	@Test
	void aPermitHoldersReleaseLetsInAsManyAsTheSemaphoreHasRoomFor() {
		long now = serverMillis();
		this.redis.call("SET", "k", "s3|" + WRITER + ",5," + (now + 30_000) + ",0|other,4," + (now + 30_000) + ",0:w",
				"PX", "30000");
		this.redis.call("SET", "fence", "5");
		queue("p1", now - 1, "s3"); // its entry expired
		queue("p2", now + 5_000, "s3");
		queue("p3", now + 5_000, "s3");
		queue("p4", now + 5_000, "s3");

		assertThat(this.scripts.release(WRITER)).isEqualTo(1L);

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

	private List<String> holders() {
		String value = this.scripts.value();
		List<String> owners = new ArrayList<>();
		for (String part : value.substring(value.indexOf('|') + 1).split("\\|")) {
			owners.add(part.split(",")[0]);
		}
		return owners;
	}

	private List<String> fields() {
		List<String> fields = new ArrayList<>();
		for (Object field : (List<?>) this.redis.call("HKEYS", "t")) {
			fields.add((String) field);
		}
		return fields;
	}

	private long serverMillis() {
		List<?> time = (List<?>) this.redis.call("TIME");
		return Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
	}

}
