package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.internal.engine.Probes;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Waiters: woken by the release notification of another client, by a lease that expires
 * without a release, and by polling where SUBSCRIBE is refused; the wait time is
 * honoured.
 */
@RedisTest
class WaitingTests {

	private final RedisNode redis;

	private RedisClient client;

	WaitingTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
	}

	@AfterEach
	void disconnect() {
		this.client.shutdown();
	}

	@Test
	void aReleaseWakesAWaiterOfAnotherClientWithinMilliseconds() throws Exception {
		// two templates = two clients with their own connections: the wake-up must come
		// through Redis pub/sub
		try (RedisLockTemplate holder = TestLocks.builder(this.client).build();
				RedisLockTemplate waiter = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build()) {
			List<Long> gaps = new ArrayList<>();
			for (int trial = 0; trial < 50; trial++) {
				String key = "handoff:" + trial;
				LockHandle held = holder.acquire(key);
				CountDownLatch waiting = new CountDownLatch(1);
				CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
					waiting.countDown();
					try (LockHandle lock = waiter.acquire(key)) {
						return System.nanoTime();
					}
				});
				assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
				assertThat(TestLocks.eventually(Duration.ofSeconds(5),
						() -> Probes.engine(waiter).keysWaitedFor() == 1 && isParked(waiter)))
					.as("the waiter is parked")
					.isTrue();
				long released = System.nanoTime();
				held.close();
				gaps.add((acquiredAt.get(5, TimeUnit.SECONDS) - released) / 1_000);
			}
			Collections.sort(gaps);
			long median = gaps.get(gaps.size() / 2);
			System.out.printf("release -> next acquire by another client, 50 trials: median %.2f ms, p90 %.2f ms, "
					+ "max %.2f ms%n", median / 1000.0, gaps.get(45) / 1000.0, gaps.get(49) / 1000.0);
			assertThat(median).as("median gap in microseconds").isLessThanOrEqualTo(20_000);
		}
	}

	private static boolean isParked(RedisLockTemplate template) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.anyMatch((thread) -> thread.getState() == Thread.State.TIMED_WAITING
					&& Thread.getAllStackTraces().get(thread).length > 0
					&& java.util.Arrays.stream(thread.getStackTrace())
						.anyMatch((frame) -> frame.getMethodName().equals("await")
								&& frame.getClassName().endsWith("BlockingAcquirer")));
	}

	@Test
	void manyWaitersShareOneSubscriptionPerClient() throws Exception {
		try (RedisLockTemplate holder = TestLocks.builder(this.client).build();
				RedisLockTemplate waiters = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build()) {
			LockHandle held = holder.acquire("shared");
			List<CompletableFuture<Long>> waiting = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				waiting.add(CompletableFuture.supplyAsync(() -> waiters.execute("shared", LockHandle::fencingToken),
						java.util.concurrent.Executors.newSingleThreadExecutor()));
			}
			// one-key locks are handed off: the waiters' client listens on its own
			// channel
			assertThat(TestLocks.eventually(Duration.ofSeconds(5),
					() -> ((List<?>) this.redis.call("PUBSUB", "CHANNELS", "lockstep:__c:*")).size() == 1))
				.isTrue();
			long subscribesBefore = TestLocks.commandCalls(this.redis, "subscribe");
			String pubSubClients = (String) this.redis.call("CLIENT", "LIST", "TYPE", "pubsub");
			List<?> channels = (List<?>) this.redis.call("PUBSUB", "CHANNELS", "lockstep:*");
			System.out.printf("8 waiters on one key: %d pub/sub connection(s), subscribed to %s%n",
					pubSubClients.lines().count(), channels);
			assertThat(pubSubClients.lines().count()).isEqualTo(1);
			assertThat(channels).hasSize(1);
			held.close();
			for (CompletableFuture<Long> waiter : waiting) {
				assertThat(waiter.get(10, TimeUnit.SECONDS)).isPositive();
			}
			assertThat(TestLocks.commandCalls(this.redis, "subscribe")).as("SUBSCRIBE calls during 8 hand-offs")
				.isEqualTo(subscribesBefore);
		}
	}

	@Test
	void aLeaseThatExpiresWithoutReleaseWakesTheWaiter() {
		try (RedisLockTemplate holder = TestLocks.builder(this.client).build();
				RedisLockTemplate waiter = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(5)).build()) {
			// 1200 ms: a wake-up at the holder's remaining lease, not at the 500 ms
			// re-check
			holder.withLeaseTime(Duration.ofMillis(1_200)).acquire("expiring");
			long start = System.nanoTime();
			try (LockHandle lock = waiter.acquire("expiring")) {
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("lease of 1200 ms expired without release: waiter acquired after %d ms%n", millis);
				assertThat(millis).isBetween(1_100L, 1_450L);
			}
		}
	}

	@Test
	void theWaitTimeIsHonoured() {
		try (RedisLockTemplate holder = TestLocks.builder(this.client).build();
				RedisLockTemplate waiter = TestLocks.builder(this.client).build()) {
			try (LockHandle held = holder.acquire("busy")) {
				long start = System.nanoTime();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> waiter.withWaitTime(Duration.ofMillis(300)).acquire("busy"))
					.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("lockstep:busy"))
					.satisfies((ex) -> assertThat(ex.getWaited()).isGreaterThanOrEqualTo(Duration.ofMillis(300)));
				long millis = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("wait time 300 ms: gave up after %d ms%n", millis);
				assertThat(millis).isBetween(300L, 550L);
				start = System.nanoTime();
				assertThat(waiter.tryAcquire("busy")).isEmpty();
				assertThat(waiter.tryExecute("busy", (lock) -> "ran")).isEmpty();
				assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(100);
			}
		}
	}

	@Test
	void fallsBackToPollingWhereSubscribeIsRefused() throws Exception {
		this.redis.call("ACL", "SETUSER", "nochannels", "on", ">secret", "~*", "resetchannels", "+@all");
		RedisClient restricted = RedisClient.create(RedisURI.builder()
			.withHost(this.redis.host())
			.withPort(this.redis.port())
			.withAuthentication("nochannels", "secret")
			.build());
		try (RedisLockTemplate holder = TestLocks.builder(restricted).build();
				RedisLockTemplate waiter = TestLocks.builder(restricted).waitTime(Duration.ofSeconds(5)).build()) {
			LockHandle held = holder.acquire("polled");
			CompletableFuture<Long> acquiredAt = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = waiter.acquire("polled")) {
					return System.nanoTime();
				}
			});
			assertThat(TestLocks.eventually(Duration.ofSeconds(5), () -> !Probes.engine(waiter).wakeUps().notifies()))
				.isTrue();
			long released = System.nanoTime();
			held.close();
			long millis = (acquiredAt.get(5, TimeUnit.SECONDS) - released) / 1_000_000;
			System.out.printf("SUBSCRIBE refused: waiter acquired %d ms after release by polling%n", millis);
			assertThat(millis).isLessThan(250);
		}
		finally {
			restricted.shutdown();
		}
	}

}
