package io.lockstep.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
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

	/** The server's clock in microseconds before the last {@link #handOff}'s script. */
	private long clockMicrosBefore;

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
	void everyValueShapeEndsAsTheGeneralReleaseEndsIt() throws InterruptedException {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		List<String> shapes = List.of(OWNER + ":7:0", OWNER + ":7:" + (now + 60_000), OWNER + ":7:0:w",
				OWNER + ":7:0:500:" + (now + 60_000), OWNER + ":7:0:500:" + (now - 100),
				OWNER + ":7:0:500:" + (now + 60_000) + ":w", "r|" + OWNER + ",7," + (now + 60_000) + ",0,0",
				"~w:" + OWNER + ":w", OWNER.substring(0, 31) + ":7:0", OWNER + "0:7:0", "ffff:7:0", OWNER, "");
		int plainReleases = comparePaths("plain release", shapes, this::release, "released and deleted",
				(outcome, info) -> outcome.released() == 1 && outcome.left() == null);
		// the owner's plain values (with and without a cap), its waited one (no waiter
		// queued: deleted and published), its delayed ones whose lease lasts, its share
		assertThat(plainReleases).isEqualTo(6);
	}

	@Test
	void aReaderThatLeavesOtherReadersEndsAsTheGeneralReleaseEndsIt() throws InterruptedException {
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
		// the plain path writes the value once and never reads the server time
		int plainLeaves = comparePaths("plain release of a reader", shapes, this::release, "left by the plain path",
				(outcome, info) -> !info.contains("cmdstat_time:") && info.contains("cmdstat_set:calls=1,"));
		// the first five
		assertThat(plainLeaves).isEqualTo(5);
	}

	@Test
	void anExclusiveKeyHandedToItsFirstWaiterEndsAsTheGeneralReleaseEndsIt() throws InterruptedException {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		String live = Long.toString(now + 60_000);
		String dead = Long.toString(now - 100);
		String waiter = "fedcba9876543210fedcba9876543210";
		String other = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
		String waited = OWNER + ":7:0:w";
		// a state: the key's value, then the queue's entries (owner token, table entry;
		// an entry left out of the table is a token without one), then "message=" for
		// the release's notification, "fence=" for the counter (empty: missing), or
		// "mark=" for a writer's mark on several keys
		List<List<String>> states = List.of(
				// a live exclusive waiter first, without max hold or lock delay
				List.of(waited, waiter, live + ":5000:0:x:chan"),
				List.of(OWNER + ":7:" + live + ":w", waiter, live + ":5000:0:x:chan", other, live + ":5000:0:x:chan"),
				List.of(waited, waiter, live + ":5000:0:x:chan", "mark=" + other + ":" + live),
				// channels with a colon, or that begin as a lock delay's prefix
				List.of(waited, waiter, live + ":5000:0:x:x:chan"), List.of(waited, waiter, live + ":5000:0:x:d:chan"),
				// the owner's own token first in its queue
				List.of(waited, OWNER, live + ":5000:0:x:chan"),
				// the counter missing: the token is seeded from the clock (on the
				// plain path's way one more: the seed itself is not issued)
				List.of(waited, waiter, live + ":5000:0:x:chan", "fence="),
				List.of(waited, waiter, live + ":5000:0:x:chan", "fence=", "message="),
				// a max hold, a lock delay, a reader, an entry of an earlier version
				List.of(waited, waiter, live + ":5000:3000:x:chan"),
				List.of(waited, waiter, live + ":5000:0:x:d500:chan"),
				List.of(waited, waiter, live + ":5000:0:r:chan", other, live + ":5000:0:x:chan"),
				List.of(waited, waiter, live + ":5000:0:chan"),
				// dead entries before a live one, a token without an entry, no waiter
				List.of(waited, other, dead + ":5000:0:x:chan", waiter, live + ":5000:0:x:chan"),
				List.of(waited, other, "", waiter, live + ":5000:0:x:chan"), List.of(waited),
				// the owner's lease in its lock delay, another owner's key, and a
				// release that notifies nobody (undoing a failed attempt)
				List.of(OWNER + ":7:0:500:" + live + ":w", waiter, live + ":5000:0:x:chan"),
				List.of(other + ":7:0:w", waiter, live + ":5000:0:x:chan"),
				List.of(waited, waiter, live + ":5000:0:x:chan", "message="));
		int plainHandOffs;
		try (HandOffListener heard = new HandOffListener(this.scripts.client())) {
			// the plain path reads the queue's first entry once (LINDEX, HGET) and takes
			// one fencing token (INCR); the general path reads a writer's mark too (HGET)
			// and pops the entry it reads
			plainHandOffs = comparePaths("plain hand-off", states, (state, keys) -> handOff(state, keys, heard),
					"handed off by the plain path",
					(outcome, info) -> info.contains("cmdstat_lindex:calls=1,")
							&& info.contains("cmdstat_hget:calls=1,") && info.contains("cmdstat_incr:calls=1,")
							&& outcome.startsWith("1 "));
		}
		// the first six; with the counter missing the plain path goes on to the
		// general one after its INCR (release.lua seeds the counter, then hands off)
		assertThat(plainHandOffs).isEqualTo(6);
	}

	/**
	 * Runs each state by the release's plain path (the key alone) and its general one
	 * (two keys, the second missing), asserts that both leave the same, and counts the
	 * states whose plain run {@code counts} picks from its outcome and the command
	 * statistics of its script.
	 */
	private <S, O> int comparePaths(String what, List<S> states, PathRun<S, O> run, String counted,
			BiPredicate<O, String> counts) throws InterruptedException {
		List<String> differences = new ArrayList<>();
		int plainRuns = 0;
		for (S state : states) {
			O plain = run.apply(state, List.of("k", "q", "t", "fence"));
			plainRuns += counts.test(plain, this.lastInfo) ? 1 : 0;
			O general = run.apply(state, List.of("k", "other", "q", "q2", "t", "t2", "fence", "fence2"));
			if (!plain.equals(general)) {
				differences.add(state + ":\n  plain   " + plain + "\n  general " + general);
			}
		}
		System.out.printf("%s: %d states, %d %s, %d differences%n", what, states.size(), plainRuns, counted,
				differences.size());
		assertThat(differences).isEmpty();
		return plainRuns;
	}

	/** Sets up a state, runs the release with these keys, and reads what it left. */
	private interface PathRun<S, O> {

		O apply(S state, List<String> keys) throws InterruptedException;

	}

	/**
	 * Sets the key, its queue and table (and its fencing counter to 41 unless the state
	 * says otherwise), releases it as the owner, and reads the reply, what is left and
	 * what was published, fencing tokens seeded from the clock written as {@code T}.
	 */
	private String handOff(List<String> state, List<String> keys, HandOffListener heard) throws InterruptedException {
		this.redis.call("FLUSHALL");
		this.redis.call("SET", "k", state.get(0), "PX", "60000");
		String fence = "41";
		String message = null;
		for (int i = 1; i < state.size(); i++) {
			String item = state.get(i);
			if (item.startsWith("fence=")) {
				fence = item.substring(6);
			}
			else if (item.startsWith("message=")) {
				message = item.substring(8);
			}
			else if (item.startsWith("mark=")) {
				this.redis.call("HSET", "t", "~w", item.substring(5));
			}
			else {
				this.redis.call("RPUSH", "q", item);
				if (!state.get(i + 1).isEmpty()) {
					this.redis.call("HSET", "t", item, state.get(i + 1));
				}
				i++;
			}
		}
		if (!fence.isEmpty()) {
			this.redis.call("SET", "fence", fence);
		}
		List<?> time = (List<?>) this.redis.call("TIME");
		this.clockMicrosBefore = Long.parseLong(String.valueOf(time.get(0))) * 1_000_000
				+ Long.parseLong(String.valueOf(time.get(1)));
		this.redis.call("CONFIG", "RESETSTAT");
		Long released = this.scripts.eval(LockScripts.RELEASE, keys,
				(message != null) ? List.of(OWNER, message) : List.of(OWNER));
		this.lastInfo = (String) this.redis.call("INFO", "commandstats");
		long pttl = (Long) this.redis.call("PTTL", "k");
		String value = (String) this.redis.call("GET", "k");
		String counter = (String) this.redis.call("GET", "fence");
		if (value != null && state.size() > 1 && value.startsWith(state.get(1) + ":") && !value.equals(state.get(0))) {
			// a hand-off: its token is the counter's new value, above every
			// earlier one (41, or a seed from the clock in microseconds)
			String token = value.split(":")[1];
			assertThat(token).as("the token handed off in %s", state).isEqualTo(counter);
			assertThat(Long.parseLong(token)).as("the token handed off in %s", state)
				.isGreaterThan(fence.isEmpty() ? this.clockMicrosBefore : 41);
		}
		String left = released + " k=" + this.redis.call("GET", "k") + " ttl="
				+ ((pttl > 55_000) ? "about 60 s" : "about " + Math.round(pttl / 100.0) * 100 + " ms") + " fence="
				+ this.redis.call("GET", "fence") + " queue=" + this.redis.call("LRANGE", "q", "0", "-1") + " table="
				+ this.redis.call("HGETALL", "t") + " published=" + heard.drain(this.redis);
		// and the times in ms, which the two runs read apart
		return left.replaceAll("1[0-9]{15}", "T").replaceAll("1[0-9]{12}", "t");
	}

	@Test
	void everyKeyStateIsAcquiredAsTheGeneralAcquireAcquiresIt() {
		long now = Long.parseLong(String.valueOf(((List<?>) this.redis.call("TIME")).get(0))) * 1000;
		String live = Long.toString(now + 60_000);
		// another owner's exclusive values: a waiter's first attempt queues on the plain
		// path (the same commands in the same order as the general path, so which path
		// ran shows only in its time), with other waiters queued or the owner itself
		List<String> others = List.of("ffff:7:0", "ffff:7:0:w", "~w:ffff:w", "ffff:7:0:500:" + live, OWNER + "0:7:0",
				OWNER.substring(0, 31) + ":7:0:w");
		List<String> states = new ArrayList<>(others);
		states.addAll(List.of("", OWNER + ":7:0", OWNER + ":7:0:w", "r|ffff,7," + live + ",0,0",
				"s3|ffff,7," + live + ",0,0", OWNER + ":7:0:500:" + (now - 100)));
		List<String> differences = new ArrayList<>();
		int acquired = 0;
		int bare = 0;
		int runs = 0;
		for (String state : states) {
			// the waiters queued before: none, another, and (behind a holder) the owner
			List<List<String>> queues = others.contains(state) ? List.of(List.of(), List.of("eeee"), List.of(OWNER))
					: List.of(List.of(), List.of("eeee"));
			for (List<String> queued : queues) {
				// a hand-off lease and a channel, or none and a channel with a colon
				for (String tail : List.of(":2000:5000:chan", ":2000::x:chan")) {
					for (boolean counter : new boolean[] { true, false }) {
						String plain = acquire(state, queued, counter, "n" + tail);
						String general = acquire(state, queued, counter, "q" + tail);
						bare += plain.contains(", bare]") ? 1 : 0;
						if (!plain.replace(", bare]", "]").equals(general)) {
							differences.add(state + " queued " + queued + " " + tail + (counter ? "" : " (no counter)")
									+ ":\n  plain   " + plain + "\n  general " + general);
						}
						acquired += plain.startsWith("[1,") ? 1 : 0;
						runs++;
					}
				}
			}
		}
		System.out.printf(
				"plain acquire: %d attempts, %d acquired (%d by the plain path's bare token), %d differences%n", runs,
				acquired, bare, differences.size());
		assertThat(differences).isEmpty();
		// the free key and the owner's own (a retried attempt), with and without a
		// counter, with and without another waiter queued, for both tails
		assertThat(acquired).isEqualTo(24);
		// the plain path grants the free key with a counter itself; the others go on to
		// the general path
		assertThat(bare).isEqualTo(4);
	}

	/**
	 * Sets the key to {@code value}, queues the waiters (entries living 60 s; the owner's
	 * own 1 s, as an earlier attempt of it would have left it), sets the fencing counter
	 * to 41 when {@code counter}, runs an attempt in {@code mode}, and reads the reply
	 * and the keys left: queue entries' expiries as their distance to the clock before
	 * the script, fencing tokens seeded from the clock written as {@code T}.
	 */
	private String acquire(String value, List<String> queued, boolean counter, String mode) {
		this.redis.call("FLUSHALL");
		List<?> time = (List<?>) this.redis.call("TIME");
		long before = Long.parseLong(String.valueOf(time.get(0))) * 1000
				+ Long.parseLong(String.valueOf(time.get(1))) / 1000;
		if (!value.isEmpty()) {
			this.redis.call("SET", "k", value, "PX", "60000");
		}
		for (String waiter : queued) {
			long expires = before + (waiter.equals(OWNER) ? 1_000 : 60_000);
			this.redis.call("RPUSH", "q", waiter);
			this.redis.call("HSET", "t", waiter, expires + ":5000:0:x:chan");
		}
		if (counter) {
			this.redis.call("SET", "fence", "41");
		}
		this.redis.call("CONFIG", "RESETSTAT");
		List<Long> reply = this.scripts.eval(LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"),
				List.of(OWNER, "30000", mode, "0", "0"));
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
		List<String> table = new ArrayList<>();
		for (Object item : (List<?>) this.redis.call("HGETALL", "t")) {
			Matcher entry = Pattern.compile("^(\\d+)(:.*)$").matcher((String) item);
			table.add(entry.matches()
					? "now+" + Math.round((Long.parseLong(entry.group(1)) - before) / 100.0) * 100 + entry.group(2)
					: (String) item);
		}
		String state = shown + " k=" + this.redis.call("GET", "k") + " pttl>29000=" + (pttl > 29_000) + " fence="
				+ this.redis.call("GET", "fence") + " queue=" + this.redis.call("LRANGE", "q", "0", "-1") + " table="
				+ table + " queue and table expire in about "
				+ Math.round((Long) this.redis.call("PTTL", "q") / 100.0) * 100 + " and "
				+ Math.round((Long) this.redis.call("PTTL", "t") / 100.0) * 100 + " ms published="
				+ info.contains("cmdstat_publish:") + " sets=" + TestLocks.commandCalls(this.redis, "set");
		// and the times in ms, which the two runs read apart
		return state.replaceAll("1[0-9]{15}", "T").replaceAll("1[0-9]{12}", "t");
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

	/**
	 * The messages on every channel, read up to a marker the test publishes after the
	 * script: Redis delivers one connection's messages in the order they were published.
	 */
	private static final class HandOffListener implements AutoCloseable {

		private final StatefulRedisPubSubConnection<String, String> connection;

		private final BlockingQueue<String> messages = new LinkedBlockingQueue<>();

		HandOffListener(RedisClient client) {
			this.connection = client.connectPubSub();
			this.connection.addListener(new RedisPubSubAdapter<>() {
				@Override
				public void message(String pattern, String channel, String message) {
					HandOffListener.this.messages.add(channel + " " + message);
				}
			});
			this.connection.sync().psubscribe("*");
		}

		List<String> drain(RedisNode redis) throws InterruptedException {
			redis.call("PUBLISH", "chan", "end");
			List<String> heard = new ArrayList<>();
			while (true) {
				String message = this.messages.poll(5, TimeUnit.SECONDS);
				assertThat(message).as("the marker published after the script").isNotNull();
				if (message.equals("chan end")) {
					return heard;
				}
				heard.add(message);
			}
		}

		@Override
		public void close() {
			this.connection.close();
		}

	}

	/** What a release left: its reply, the key's value and TTL, whether it published. */
	private record Outcome(long released, String left, boolean published, String ttl) {
	}

}
