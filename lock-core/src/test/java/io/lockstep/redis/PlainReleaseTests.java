package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
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
 * {@code release.lua} releases one plain key of its owner before its libraries are
 * defined ({@code release-plain.lua}); every value it may find must then end as the
 * general path would end it. The general path runs when a release names two keys (the
 * second one missing), the plain one for the key alone: same reply, same key left behind,
 * same messages published, for every shape a lock key's value takes.
 */
@RedisTest
class PlainReleaseTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private final RedisNode redis;

	private RedisClient client;

	private LockCommands commands;

	PlainReleaseTests(RedisNode redis) {
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

	@Test
	void everyValueShapeEndsAsTheGeneralReleaseEndsIt() {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		List<String> shapes = List.of(OWNER + ":7:0", OWNER + ":7:" + (now + 60_000), OWNER + ":7:0:w",
				OWNER + ":7:0:500:" + (now + 60_000), OWNER + ":7:0:500:" + (now - 100),
				OWNER + ":7:0:500:" + (now + 60_000) + ":w", "r|" + OWNER + ",7," + (now + 60_000) + ",0,0",
				"~w:" + OWNER + ":w", OWNER.substring(0, 31) + ":7:0", OWNER + "0:7:0", "ffff:7:0", OWNER, "");
		List<String> differences = new ArrayList<>();
		int plainReleases = 0;
		for (String shape : shapes) {
			Outcome plain = release(shape, List.of("k", "q", "t", "fence"));
			Outcome general = release(shape, List.of("k", "other", "q", "q2", "t", "t2", "fence", "fence2"));
			if (!plain.equals(general)) {
				differences.add(shape + ": plain " + plain + ", general " + general);
			}
			plainReleases += (plain.released() == 1 && plain.left() == null) ? 1 : 0;
		}
		System.out.printf("plain release: %d value shapes, %d released, %d differences%n", shapes.size(), plainReleases,
				differences.size());
		assertThat(differences).isEmpty();
		// the owner's plain values (with and without a cap), its waited one (no waiter
		// queued: deleted and published), its delayed ones whose lease lasts, its share
		assertThat(plainReleases).isEqualTo(6);
	}

	/**
	 * Sets the key to {@code value}, releases it as the owner, and reads what is left.
	 */
	private Outcome release(String value, List<String> keys) {
		this.redis.call("FLUSHALL");
		if (!value.isEmpty()) {
			this.redis.call("SET", "k", value, "PX", "60000");
		}
		this.redis.call("CONFIG", "RESETSTAT");
		Long released = this.commands.eval(LockScripts.RELEASE, keys, List.of(OWNER), "release");
		String info = (String) this.redis.call("INFO", "commandstats");
		return new Outcome(released, (String) this.redis.call("GET", "k"), info.contains("cmdstat_publish:"));
	}

	private record Outcome(long released, String left, boolean published) {
	}

}
