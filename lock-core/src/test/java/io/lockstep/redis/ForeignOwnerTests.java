package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
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
 * A client that is not the owner never releases, renews, keeps, confirms or re-enters
 * another owner's lock, whatever token it sends: a random one, a prefix, a case variant,
 * a Lua pattern, a NUL byte. Complements {@link ScriptTests}.
 */
@RedisTest
class ForeignOwnerTests {

	private static final int RANDOM_TOKENS = 1_000;

	private final RedisNode redis;

	private RedisClient client;

	private LockCommands commands;

	ForeignOwnerTests(RedisNode redis) {
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
	void noScriptActsForAForeignToken() {
		String owner = HexFormat.of().formatHex(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 });
		List<Long> granted = this.commands.eval(LockScripts.ACQUIRE, List.of("k", "fence"), List.of(owner, "60000"),
				() -> "acquire");
		assertThat(granted.get(0)).isEqualTo(1L);
		String value = (String) this.redis.call("GET", "k");
		String fence = (String) this.redis.call("GET", "fence");
		List<String> foreign = new ArrayList<>(List.of("", ":", owner.substring(0, 31), owner.toUpperCase(),
				owner + "0", ".*", "%w+", "[0-9a-f]*", owner.substring(0, 16), "\u0000" + owner));
		for (int i = 0; i < RANDOM_TOKENS; i++) {
			byte[] token = new byte[16];
			ThreadLocalRandom.current().nextBytes(token);
			foreign.add(HexFormat.of().formatHex(token));
		}
		long effects = 0;
		for (String token : foreign) {
			effects += effect(
					this.commands.<Long>eval(LockScripts.DELETE, List.of("k"), List.of(token), () -> "delete"));
			effects += effect(this.commands.<Long>eval(LockScripts.RELEASE, List.of("k", "q", "t", "fence"),
					List.of(token), () -> "release"));
			effects += effect(this.commands.<Long>eval(LockScripts.LEAVE, List.of("k", "q", "t", "fence"),
					List.of(token), () -> "leave"));
			effects += effect(this.commands
				.<List<Long>>eval(LockScripts.RENEW, List.of("k"), List.of(token, "9999999"), () -> "renew")
				.get(0));
			effects += effect(
					this.commands.<Long>eval(LockScripts.KEEP, List.of("k"), List.of(token, "9999999"), () -> "keep"));
			effects += effect(this.commands.<Long>eval(LockScripts.CHECK, List.of("k"), List.of(token), () -> "check"));
			effects += effect(this.commands.<Long>eval(LockScripts.RAISE_FENCE, List.of("k", "fence"),
					List.of(token, "999999999999999999"), () -> "raise-fence"));
			effects += effect(this.commands
				.<List<Long>>eval(LockScripts.ACQUIRE, List.of("k", "fence"), List.of(token, "9999999"),
						() -> "acquire")
				.get(0));
			effects += effect(this.commands
				.<List<Long>>eval(LockScripts.ACQUIRE_ALL, List.of("free", "k", "fence", "fence"),
						List.of(token, "9999999", "0"), () -> "acquire-all")
				.get(0));
		}
		long pttl = (Long) this.redis.call("PTTL", "k");
		// a waiter may mark the key as waited for (":w"), so that its release notifies
		String now = (String) this.redis.call("GET", "k");
		boolean unchanged = value.equals(now.endsWith(":w") ? now.substring(0, now.length() - 2) : now);
		// an acquire attempt may take a fencing token (INCR) before it finds the key
		// held:
		// the counter only grows, by at most one per attempt, and is never raised for a
		// foreign owner
		long counterGrowth = Long.parseLong((String) this.redis.call("GET", "fence")) - Long.parseLong(fence);
		System.out.printf(
				"foreign owner: %,d tokens (%d crafted) x 9 scripts -> %d effects; value unchanged %s, "
						+ "fencing counter +%d, PTTL %d ms of 60,000, key 'free' of the all-or-nothing attempt %s%n",
				foreign.size(), foreign.size() - RANDOM_TOKENS, effects, unchanged, counterGrowth, pttl,
				((Long) this.redis.call("EXISTS", "free") == 0) ? "absent" : "PRESENT");
		assertThat(effects).isZero();
		assertThat(unchanged).as("owner, fencing token and cap of %s", now).isTrue();
		assertThat(counterGrowth).isBetween(0L, 2L * foreign.size());
		assertThat(pttl).isBetween(1L, 60_000L);
		assertThat(this.redis.call("EXISTS", "free")).isEqualTo(0L);
		// the owner itself still can
		assertThat(this.commands.<Long>eval(LockScripts.RELEASE, List.of("k", "q", "t", "fence"), List.of(owner),
				() -> "release"))
			.isEqualTo(1L);
	}

	/**
	 * 1 when a script reports that it acted (released, renewed, kept, found, raised,
	 * acquired).
	 */
	private static long effect(Object reply) {
		long value = (reply instanceof List<?> list) ? (Long) list.get(0) : (Long) reply;
		return (value != 0) ? 1 : 0;
	}

	/**
	 * A key whose value is of no kind Lockstep writes ("x|...": neither an exclusive
	 * holder's, nor readers', nor a semaphore's) is never taken as granted, with or
	 * without the fencing counter there (the plain path's case and the general one's):
	 * the call fails and the value stays.
	 */
	@Test
	void aKeyHeldAsAnUnknownKindIsNeverGranted() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build()) {
			TestLocks.warmUp(locks);
			int refused = 0;
			for (boolean counter : new boolean[] { true, false }) {
				if (!counter) {
					this.redis.call("FLUSHALL");
				}
				this.redis.call("SET", "lockstep:unknown", "x|y", "PX", "60000");
				try {
					Optional<LockHandle> handle = locks.tryAcquire("unknown");
					handle.ifPresent(LockHandle::close);
					assertThat(handle).as("a handle on a key of an unknown kind (counter %s)", counter).isEmpty();
				}
				catch (LockException ex) {
					assertThat(ex).hasMessageContaining("unknown'").hasMessageContaining("nothing was acquired");
					refused++;
				}
				assertThat(this.redis.call("GET", "lockstep:unknown")).isEqualTo("x|y");
			}
			System.out.printf("unknown kind: %d of 2 attempts refused with a LockException%n", refused);
			assertThat(refused).isEqualTo(2);
		}
	}

	@Test
	void aHandleWhoseLeaseRanOutNeverReleasesOrRenewsTheNextOwnersLock() {
		try (RedisLockTemplate first = TestLocks.builder(this.client).build();
				RedisLockTemplate second = TestLocks.builder(this.client).build()) {
			// scripts loaded before the short leases: a first call's NOSCRIPT round trip
			// is not
			// part of what the test measures
			TestLocks.warmUp(first, second);
			int rounds = 20;
			int intact = 0;
			for (int i = 0; i < rounds; i++) {
				String key = "expired:" + i;
				LockHandle stale = first.withLeaseTime(Duration.ofMillis(200)).acquire(key);
				await().atMost(Duration.ofSeconds(2)).until(() -> !second.isLocked(key));
				Optional<LockHandle> next = second.withLeaseTime(Duration.ofSeconds(30)).tryAcquire(key);
				assertThat(next).isPresent();
				String value = (String) this.redis.call("GET", next.get().key());
				try {
					stale.close();
				}
				catch (RuntimeException ex) {
					// a lost lease may report itself at close; the point is what Redis
					// holds
				}
				long pttl = (Long) this.redis.call("PTTL", next.get().key());
				if (value.equals(this.redis.call("GET", next.get().key())) && pttl > 25_000 && next.get().isHeld()) {
					intact++;
				}
				next.get().close();
			}
			System.out.printf("foreign owner: %d of %d next owners' keys intact after the stale handle closed%n",
					intact, rounds);
			assertThat(intact).isEqualTo(rounds);
		}
	}

}
