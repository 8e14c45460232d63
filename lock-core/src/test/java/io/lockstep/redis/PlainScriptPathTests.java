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
 * {@code acquire.lua} and {@code release.lua} take their commonest case before their
 * libraries are defined ({@code acquire-plain.lua}, {@code release-plain.lua}); every
 * state they may find must end as the general path ends it. A release runs the general
 * path when it names two keys (the second one missing), the plain one for the key alone;
 * an acquire runs it for an attempt that leaves a queue entry ({@code 'q'}, which has
 * none to leave here), the plain one for a first attempt ({@code 'n'}): same reply (the
 * plain path's grant is the bare fencing token, read as {@code {ACQUIRED, token}}), same
 * keys left behind, same messages published.
 */
@RedisTest
class PlainScriptPathTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private final RedisNode redis;

	private ScriptRunner scripts;

	/** The command statistics of the last {@link #release}'s script. */
	private String lastInfo = "";

	PlainScriptPathTests(RedisNode redis) {
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

	@Test
	void aReaderThatLeavesOtherReadersEndsAsTheGeneralReleaseEndsIt() {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		String soon = Long.toString(now + 30_000);
		// the key's TTL (60 s, as release() sets it) is the latest lease end of its
		// holders
		String last = Long.toString(now + 60_000);
		List<String> shapes = List.of("r|" + OWNER + ",7," + soon + ",0|ffff,8," + last + ",0",
				"r|ffff,8," + last + ",0|" + OWNER + ",7," + soon + ",0:w",
				"r|ffff,8," + last + ",0|" + OWNER + ",7," + soon + ",0|eeee,9," + soon + ",0:w",
				// another lease that ends with its own, or later by its lock delay
				"r|" + OWNER + ",7," + last + ",0|ffff,8," + last + ",0",
				"r|" + OWNER + ",7," + last + ",0|ffff,8," + soon + ",0,30000:w",
				// its own lease end is the key's TTL: the TTL must come down to the
				// others'
				"r|" + OWNER + ",7," + last + ",0|ffff,8," + soon + ",0",
				// and the others' leases ended: the key is freed
				"r|" + OWNER + ",7," + last + ",0|ffff,8," + (now - 100) + ",0:w",
				// a lock delay, a semaphore, a sole reader, another owner whose token
				// starts
				// with the owner's
				"r|" + OWNER + ",7," + soon + ",0,500|ffff,8," + last + ",0",
				"s3|" + OWNER + ",7," + soon + ",0|ffff,8," + last + ",0", "r|" + OWNER + ",7,0,0",
				"r|ffff,8," + last + ",0|" + OWNER + "0,7," + soon + ",0");
		List<String> differences = new ArrayList<>();
		int plainLeaves = 0;
		for (String shape : shapes) {
			Outcome plain = release(shape, List.of("k", "q", "t", "fence"));
			// the plain path writes the value once and never reads the server time
			boolean leftByPlainPath = !this.lastInfo.contains("cmdstat_time:")
					&& this.lastInfo.contains("cmdstat_set:calls=1,");
			Outcome general = release(shape, List.of("k", "other", "q", "q2", "t", "t2", "fence", "fence2"));
			if (!plain.equals(general)) {
				differences.add(shape + ": plain " + plain + ", general " + general);
			}
			plainLeaves += leftByPlainPath ? 1 : 0;
		}
		System.out.printf("plain release of a reader: %d value shapes, %d left by the plain path, %d differences%n",
				shapes.size(), plainLeaves, differences.size());
		assertThat(differences).isEmpty();
		// the first five
		assertThat(plainLeaves).isEqualTo(5);
	}

	@Test
	void everyKeyStateIsAcquiredAsTheGeneralAcquireAcquiresIt() {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		List<String> states = List.of("", "ffff:7:0", OWNER + ":7:0", OWNER + ":7:0:w",
				"r|ffff,7," + (now + 60_000) + ",0,0", "s3|ffff,7," + (now + 60_000) + ",0,0", "~w:ffff:w");
		List<String> differences = new ArrayList<>();
		int acquired = 0;
		int bare = 0;
		for (String state : states) {
			for (boolean counter : new boolean[] { true, false }) {
				String plain = acquire(state, counter, "n");
				String general = acquire(state, counter, "q");
				bare += plain.contains(", bare]") ? 1 : 0;
				if (!plain.replace(", bare]", "]").equals(general)) {
					differences
						.add(state + (counter ? "" : " (no counter)") + ": plain " + plain + ", general " + general);
				}
				acquired += plain.startsWith("[1,") ? 1 : 0;
			}
		}
		System.out.printf(
				"plain acquire: %d key states, %d acquired (%d by the plain path's bare token), %d differences%n",
				states.size() * 2, acquired, bare, differences.size());
		assertThat(differences).isEmpty();
		// the free key and the owner's own (a retried attempt), with and without a
		// counter
		assertThat(acquired).isEqualTo(6);
		// the plain path grants the free key with a counter itself; the others go on to
		// the general path
		assertThat(bare).isEqualTo(1);
	}

	/**
	 * Sets the key to {@code value} (and the fencing counter to 41 when {@code counter}),
	 * runs an attempt in {@code mode}, and reads the reply and the keys left, fencing
	 * tokens seeded from the clock written as {@code T}.
	 */
	private String acquire(String value, boolean counter, String mode) {
		this.redis.call("FLUSHALL");
		if (!value.isEmpty()) {
			this.redis.call("SET", "k", value, "PX", "60000");
		}
		if (counter) {
			this.redis.call("SET", "fence", "41");
		}
		this.redis.call("CONFIG", "RESETSTAT");
		List<Long> reply = this.scripts.eval(LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"),
				List.of(OWNER, "30000", "0", mode + ":2000:5000:chan", "0"));
		String info = (String) this.redis.call("INFO", "commandstats");
		this.lastInfo = info;
		long pttl = (Long) this.redis.call("PTTL", "k");
		List<Object> shown = new ArrayList<>(reply);
		if (reply.size() == 1) {
			// acquire-plain.lua answers a grant with the bare fencing token, which reads
			// as {ACQUIRED, token} (LockScripts.readAcquire)
			shown = new ArrayList<>(List.of(1L, reply.get(0), "bare"));
		}
		else if (reply.get(0) == 0L) {
			// the holder's remaining lease, as the reply's time left it
			shown.set(1, (reply.get(1) > 59_000) ? "about 60 s" : reply.get(1));
		}
		String state = shown + " k=" + this.redis.call("GET", "k") + " pttl>29000=" + (pttl > 29_000) + " fence="
				+ this.redis.call("GET", "fence") + " queue=" + this.redis.call("LRANGE", "q", "0", "-1") + " table="
				+ this.redis.call("HKEYS", "t") + " published=" + info.contains("cmdstat_publish:") + " sets="
				+ TestLocks.commandCalls(this.redis, "set");
		return state.replaceAll("1[0-9]{15}", "T");
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
		Long released = this.scripts.eval(LockScripts.RELEASE, keys, List.of(OWNER));
		String info = (String) this.redis.call("INFO", "commandstats");
		this.lastInfo = info;
		long pttl = (Long) this.redis.call("PTTL", "k");
		return new Outcome(released, (String) this.redis.call("GET", "k"), info.contains("cmdstat_publish:"),
				(pttl > 55_000) ? "about 60 s" : (pttl > 25_000) ? "about 30 s" : Long.toString(pttl));
	}

	/** What a release left: its reply, the key's value and TTL, whether it published. */
	private record Outcome(long released, String left, boolean published, String ttl) {
	}

}
