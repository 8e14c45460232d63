package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease a waiter takes from a hand-off is the one Redis granted it: its local
 * deadline never lies after the key's real expiry (also when max-hold-time set the
 * grant), and a short lease handed off is held, not lost on arrival.
 */
@RedisTest
class HandOffLeaseTests {

	private final List<RedisClient> clients = new ArrayList<>();

	@AfterEach
	void shutdown() {
		this.clients.forEach(RedisClient::shutdown);
	}

	/**
	 * Max-hold 1 s, lease 3 s: the lock handed to W lives at most 1 s in Redis. W polls
	 * (its ACL user may not subscribe) and finds the lock its own by a re-check, some
	 * time after the hand-off. C, queued behind W, takes the key once it expired; W's
	 * handle must not say it is held then.
	 */
	@Test
	void aWaiterThatFindsItsHandOffByRecheckNeverBelievesItHoldsTheLockAfterTheKeyExpired(RedisFixture fixture)
			throws Exception {
		RedisNode redis = fixture.standalone();
		assertThat(redis.call("ACL", "SETUSER", "poller", "on", ">secret", "~*", "+@all", "resetchannels"))
			.isEqualTo("OK");
		String key = "capped";
		int rounds = 5;
		int believedHeld = 0;
		List<String> report = new ArrayList<>();
		try (RedisLockTemplate holder = TestLocks.builder(client(redis, null)).build();
				RedisLockTemplate waiter = TestLocks.builder(client(redis, "poller"))
					.maxHoldTime(Duration.ofSeconds(1))
					.leaseTime(Duration.ofSeconds(3))
					.commandTimeout(Duration.ofMillis(300))
					.waitTime(Duration.ofSeconds(10))
					.build();
				RedisLockTemplate next = TestLocks.builder(client(redis, null))
					.waitTime(Duration.ofSeconds(10))
					.build()) {
			TestLocks.warmUp(holder, waiter, next);
			for (int round = 0; round < rounds; round++) {
				LockHandle held = holder.acquire(key);
				CompletableFuture<LockHandle> w = CompletableFuture.supplyAsync(() -> waiter.acquire(key));
				assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength(redis, key) == 1))
					.as("round %d: W queued", round)
					.isTrue();
				AtomicReference<String> atC = new AtomicReference<>();
				CompletableFuture<Long> c = CompletableFuture.supplyAsync(() -> {
					try (LockHandle lock = next.acquire(key)) {
						LockHandle handedToW = w.getNow(null);
						atC.set((handedToW == null) ? "W not acquired"
								: "W isHeld " + handedToW.isHeld() + " (token " + handedToW.fencingToken() + ")");
						return lock.fencingToken();
					}
				});
				assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength(redis, key) == 2))
					.as("round %d: C queued behind W", round)
					.isTrue();
				long pollGap = awaitFreshPollAfterGap(redis, key, 45, Duration.ofSeconds(2));
				long released = System.nanoTime();
				held.close(); // hands the lock to W, for at most max-hold
				LockHandle handedToW = w.get(5, TimeUnit.SECONDS);
				long wMillis = (System.nanoTime() - released) / 1_000_000;
				long cToken = c.get(10, TimeUnit.SECONDS);
				long cMillis = (System.nanoTime() - released) / 1_000_000;
				if (atC.get().startsWith("W isHeld true")) {
					believedHeld++;
				}
				String closed;
				try {
					handedToW.close();
					closed = "closed";
				}
				catch (LockLostException ex) {
					closed = "close threw LockLostException";
				}
				report.add(String.format(
						"round %d: released right after a poll of W (%d ms after its previous one); W had the lock %d "
								+ "ms after the release, C (token %d) after %d ms: %s; W %s",
						round, pollGap, wMillis, cToken, cMillis, atC.get(), closed));
			}
		}
		System.out.printf(
				"max-hold 1 s, lease 3 s, W polling: W's handle said held after C acquired in %d of %d rounds%n  %s%n",
				believedHeld, rounds, String.join("\n  ", report));
		assertThat(believedHeld)
			.as("rounds (of %d) in which W's isHeld() was true after the key expired and C acquired it", rounds)
			.isZero();
	}

	/**
	 * Lease 300 ms (renewed by the watchdog): the holder releases a while after the
	 * waiter's last queued re-check. The waiter's handle is held when its work starts,
	 * and the call ends without a loss; Redis holds the waiter's grant meanwhile.
	 */
	@Test
	void aShortLeaseHandedOffIsHeldWhenTheWorkStartsAndNotReportedLost(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		String key = "short";
		int rounds = 10;
		int notHeld = 0;
		int lost = 0;
		int grantInRedis = 0;
		List<String> report = new ArrayList<>();
		try (RedisLockTemplate holder = TestLocks.builder(client(redis, null)).build();
				RedisLockTemplate waiter = TestLocks.builder(client(redis, null))
					.leaseTime(Duration.ofMillis(300))
					.commandTimeout(Duration.ofMillis(100))
					.waitTime(Duration.ofSeconds(10))
					.build()) {
			TestLocks.warmUp(holder, waiter);
			for (int round = 0; round < rounds; round++) {
				LockHandle held = holder.acquire(key);
				AtomicReference<String> start = new AtomicReference<>();
				CompletableFuture<Boolean> call = CompletableFuture.supplyAsync(() -> waiter.execute(key, (lock) -> {
					boolean heldAtStart = lock.isHeld();
					String value = (String) redis.call("GET", "lockstep:" + key);
					boolean inRedis = value != null && value.split(":")[1].equals(Long.toString(lock.fencingToken()));
					start.set((heldAtStart ? "held" : "NOT held") + " at start, "
							+ (inRedis ? "Redis holds its grant" : "Redis: " + value));
					return heldAtStart;
				}));
				assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength(redis, key) == 1))
					.as("round %d: the waiter queued", round)
					.isTrue();
				long age = awaitLastQueuedAttemptAge(redis, key, 330, Duration.ofSeconds(1));
				held.close();
				String outcome;
				try {
					call.get(5, TimeUnit.SECONDS);
					outcome = "completed";
				}
				catch (ExecutionException ex) {
					outcome = "failed: " + ex.getCause();
					if (ex.getCause() instanceof LockLostException) {
						lost++;
					}
				}
				if (start.get() != null && start.get().startsWith("NOT")) {
					notHeld++;
				}
				if (start.get() != null && start.get().contains("Redis holds its grant")) {
					grantInRedis++;
				}
				report.add(String.format("round %d: released %d ms after the waiter's last queued attempt; %s; %s",
						round, age, start.get(), outcome));
			}
		}
		System.out.printf(
				"lease 300 ms handed off: %d of %d handles not held when the work started, %d of %d calls ended "
						+ "with LockLostException; Redis held the waiter's grant in %d of %d%n  %s%n",
				notHeld, rounds, lost, rounds, grantInRedis, rounds, String.join("\n  ", report));
		assertThat(notHeld).as("handles (of %d) not held when the work started", rounds).isZero();
		assertThat(lost).as("calls (of %d) that ended with LockLostException", rounds).isZero();
		assertThat(grantInRedis).as("rounds in which Redis held the waiter's grant when its work started")
			.isEqualTo(rounds);
	}

	/**
	 * Waits until the waiter's queue entry was last refreshed at least {@code millis}
	 * ago, at most {@code timeout}.
	 * @return the entry's age when it returns, in ms (negative: unknown)
	 */
	private static long awaitLastQueuedAttemptAge(RedisNode redis, String key, long millis, Duration timeout) {
		long[] age = { -1 };
		Eventually.holds(timeout, () -> {
			long at = lastQueuedAttemptAt(redis, key);
			age[0] = (at < 0) ? -1 : serverMillis(redis) - at;
			return age[0] >= millis;
		});
		return age[0];
	}

	/**
	 * Waits, at most {@code timeout}, until the polling waiter's queue entry is refreshed
	 * {@code minGapMillis} or more after its previous refresh (its back-off has grown),
	 * and returns right after that refresh: its next poll is then tens of milliseconds
	 * away.
	 * @return the gap between the last two refreshes seen, in ms (0: none seen)
	 */
	private static long awaitFreshPollAfterGap(RedisNode redis, String key, long minGapMillis, Duration timeout) {
		long[] last = { -1 };
		long[] gap = { 0 };
		Eventually.holds(timeout, () -> {
			long at = lastQueuedAttemptAt(redis, key);
			boolean fresh = at >= 0 && last[0] >= 0 && at != last[0];
			if (fresh) {
				gap[0] = at - last[0];
			}
			last[0] = at;
			return fresh && gap[0] >= minGapMillis;
		});
		return gap[0];
	}

	/**
	 * The server time (ms) of the last queued attempt of the first waiter in the key's
	 * Redis queue, or -1 when none is queued: reads Redis's queue layout (the list of
	 * owner tokens, and the waiter table's entry {@code "<expires ms>:..."}, set to the
	 * server time plus the entry's 2 s lifetime at each queued attempt).
	 */
	private static long lastQueuedAttemptAt(RedisNode redis, String key) {
		Object first = redis.call("LINDEX", "lockstep:__q:" + key, "0");
		Object entry = (first != null) ? redis.call("HGET", "lockstep:__w:" + key, (String) first) : null;
		if (entry == null) {
			return -1;
		}
		return Long.parseLong(((String) entry).split(":")[0]) - 2000;
	}

	private static long serverMillis(RedisNode redis) {
		@SuppressWarnings("unchecked")
		List<Object> time = (List<Object>) redis.call("TIME");
		return Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
	}

	private RedisClient client(RedisNode redis, String user) {
		RedisURI.Builder uri = RedisURI.builder().withHost(redis.host()).withPort(redis.port());
		if (user != null) {
			uri.withAuthentication(user, "secret".toCharArray());
		}
		RedisClient client = RedisClient.create(uri.build());
		this.clients.add(client);
		return client;
	}

	private static long queueLength(RedisNode redis, String key) {
		return (Long) redis.call("LLEN", "lockstep:__q:" + key);
	}

}
