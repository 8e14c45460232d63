package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.Probes;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@code withMinHoldTime}: a lock released before its minimum hold passed stays taken
 * until then (its key's TTL set to what remains, token-checked), a lock held longer is
 * released at once, and another owner's key is never touched.
 */
@RedisTest
class MinHoldTimeTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private static final String OTHER = "fedcba9876543210fedcba9876543210";

	private final RedisNode redis;

	private RedisClient client;

	MinHoldTimeTests(RedisNode redis) {
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
	void anEarlyCloseLeavesTheKeyToExpireWhenTheMinimumHoldPasses() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				RedisLockTemplate others = TestLocks.builder(this.client).build()) {
			assertThat(locks.isLocked("job:early")).as("connected, and free").isFalse();
			long before = System.nanoTime();
			LockHandle lock = locks.withMinHoldTime(Duration.ofSeconds(3)).acquire("job:early");
			long acquired = System.nanoTime();
			// models a run of 500 ms, shorter than the minimum hold (not synchronisation)
			Thread.sleep(500);
			long closing = System.nanoTime();
			lock.close();
			long pttl = (Long) this.redis.call("PTTL", "lockstep:job:early");
			long read = System.nanoTime();
			long lowest = 3000 - millis(read - before) - 20;
			long highest = 3000 - millis(closing - acquired) + 20;
			System.out.printf("min hold 3s, closed after %d ms: PTTL %d ms (expected %d..%d)%n",
					millis(closing - before), pttl, lowest, highest);
			assertThat(pttl).isBetween(lowest, highest);
			assertThat(lock.isHeld()).isFalse();
			assertThat(Probes.engine(locks).registered()).as("no lease left in the registry").isZero();
			assertThat(Probes.engine(locks).leasesLost()).isZero();
			assertThat(others.tryAcquire("job:early")).as("another owner finds it taken").isEmpty();
			assertThat(locks.tryAcquire("job:early")).as("so does the same template").isEmpty();
			await("expired by the end of the minimum hold").atMost(Duration.ofSeconds(4))
				.until(() -> !others.isLocked("job:early"));
			assertThat(millis(System.nanoTime() - before)).isBetween(2900L, 4500L);
			others.tryAcquire("job:early").orElseThrow().close();
		}
	}

	@Test
	void theMinimumHoldOutlivesAShorterWatchdogLease() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.leaseTime(Duration.ofSeconds(1))
			.commandTimeout(Duration.ofMillis(300))
			.build()) {
			long before = System.nanoTime();
			locks.withMinHoldTime(Duration.ofSeconds(3)).acquire("job:short-lease").close();
			long pttl = (Long) this.redis.call("PTTL", "lockstep:job:short-lease");
			long read = System.nanoTime();
			System.out.printf("min hold 3s over a 1s watchdog lease, closed at once: PTTL %d ms%n", pttl);
			assertThat(pttl).isBetween(3000 - millis(read - before) - 20, 3000L);
		}
	}

	@Test
	void aRunLongerThanTheMinimumHoldReleasesAtOnceAndWakesTheWaiter() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				RedisLockTemplate others = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build()) {
			LockHandle lock = locks.withMinHoldTime(Duration.ofMillis(600)).acquire("job:long");
			CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
				try (LockHandle handle = others.acquire("job:long")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(others).keysWaitedFor() == 1);
			// models a run of 900 ms, longer than the minimum hold of 600 ms (the waiter
			// is queued already: not synchronisation)
			Thread.sleep(900);
			long closed = System.nanoTime();
			lock.close();
			long handOff = millis(next.get(5, TimeUnit.SECONDS) - closed);
			System.out.printf("min hold 600ms, held 900ms: close -> waiter acquired in %d ms%n", handOff);
			assertThat(handOff).as("the waiter is woken by the release").isLessThan(300);
			assertThat(this.redis.call("PTTL", "lockstep:job:long")).isEqualTo(-2L);
		}
	}

	@Test
	void aWaiterIsNotWokenByAnEarlyCloseAndGetsTheLockWhenTheMinimumHoldPasses() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				RedisLockTemplate others = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build()) {
			long before = System.nanoTime();
			LockHandle lock = locks.withMinHoldTime(Duration.ofSeconds(2)).acquire("job:waited");
			CompletableFuture<Long> next = CompletableFuture.supplyAsync(() -> {
				try (LockHandle handle = others.acquire("job:waited")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(others).keysWaitedFor() == 1);
			lock.close();
			long acquiredAfter = millis(next.get(8, TimeUnit.SECONDS) - before);
			System.out.printf("min hold 2s, closed at once: the waiter acquired %d ms after the first acquisition%n",
					acquiredAfter);
			assertThat(acquiredAfter).isBetween(1950L, 3500L);
		}
	}

	/**
	 * A caller waiting behind a holder of its own client (promoted behind it, it does not
	 * ask) learns of that holder's early close, which names no successor: it asks at once
	 * and gets the lock when the minimum hold passes, not at its head's next re-check
	 * (500 ms).
	 */
	@Test
	void aWaiterBehindAnEarlyClosingHolderOfItsClientGetsTheLockWhenTheMinimumHoldPasses() throws Exception {
		RedisClient holderClient = TestLocks.client(this.redis);
		try (RedisLockTemplate holder = TestLocks.builder(holderClient).build();
				RedisLockTemplate locks = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build()) {
			TestLocks.warmUp(locks);
			LockHandle held = holder.acquire("job:behind");
			CompletableFuture<Long> firstInside = new CompletableFuture<>();
			CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
				// the first caller queues in Redis; inside, it closes at once, kept 100
				// ms
				try (LockHandle lock = locks.withMinHoldTime(Duration.ofMillis(100)).acquire("job:behind")) {
					firstInside.complete(System.nanoTime());
				}
			});
			await().atMost(Duration.ofSeconds(5))
				.until(() -> this.redis.call("LLEN", "lockstep:__q:job:behind").equals(1L));
			CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = locks.acquire("job:behind")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5))
				.until(() -> Probes.engine(locks).waitersOf("lockstep:job:behind") == 2);
			held.close();
			first.get(5, TimeUnit.SECONDS);
			long after = millis(second.get(5, TimeUnit.SECONDS) - firstInside.get());
			System.out.printf("min hold 100 ms, closed at once, a caller of the same client behind it: inside %d ms "
					+ "after the first%n", after);
			assertThat(after).as("ms from the first caller's entry (the head's re-check: 500)").isLessThan(350L);
		}
		finally {
			holderClient.shutdown();
		}
	}

	@Test
	void anEarlyClosePublishesNoReleaseNotificationALongerRunDoes() throws Exception {
		BlockingQueue<String> published = new LinkedBlockingQueue<>();
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				StatefulRedisPubSubConnection<String, String> subscriber = this.client.connectPubSub()) {
			subscriber.addListener(new RedisPubSubAdapter<>() {

				@Override
				public void message(String channel, String message) {
					published.add(channel);
				}

			});
			subscriber.sync().subscribe("lockstep:job:quiet");
			locks.withMinHoldTime(Duration.ofSeconds(2)).acquire("job:quiet").close();
			assertThat(published.poll(500, TimeUnit.MILLISECONDS)).as("no waiter is woken: the key is still taken")
				.isNull();
			await().atMost(Duration.ofSeconds(4)).until(() -> !locks.isLocked("job:quiet"));
			LockHandle lock = locks.withMinHoldTime(Duration.ofMillis(100)).acquire("job:quiet");
			CompletableFuture<Void> waiter = CompletableFuture
				.runAsync(() -> locks.withWaitTime(Duration.ofSeconds(5)).acquire("job:quiet").close());
			// the waiter has asked once and marked the key as waited for
			await().atMost(Duration.ofSeconds(5))
				.until(() -> String.valueOf(this.redis.call("GET", "lockstep:job:quiet")).endsWith(":w"));
			// models a run of 200 ms, past the minimum hold of 100 ms
			Thread.sleep(200);
			lock.close();
			assertThat(published.poll(5, TimeUnit.SECONDS)).as("a release after the minimum hold notifies the waiter")
				.isEqualTo("lockstep:job:quiet");
			waiter.get(5, TimeUnit.SECONDS);
		}
	}

	@Test
	void anEarlyCloseNeverTouchesAnotherOwnersKey() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build()) {
			LockHandle lock = locks.withMinHoldTime(Duration.ofSeconds(5)).acquire("job:taken");
			// the lease is lost: the key expired and another owner took it
			this.redis.call("DEL", "lockstep:job:taken");
			this.redis.call("SET", "lockstep:job:taken", OTHER + ":1:0", "PX", "60000");
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close)
				.withMessageContaining("held by another owner");
			assertThat(this.redis.call("GET", "lockstep:job:taken")).isEqualTo(OTHER + ":1:0");
			assertThat((Long) this.redis.call("PTTL", "lockstep:job:taken")).isGreaterThan(59_000L);
		}
	}

	@Test
	void theKeepScriptIsTokenCheckedAndNoLaterRenewalExtendsItsKey() {
		try (LockCommands commands = new LockCommands(this.client, Duration.ofSeconds(2))) {
			this.redis.call("SET", "k", OTHER + ":1:0", "PX", "60000");
			long kept = commands.eval(LockScripts.KEEP, List.of("k"), List.of(OWNER, "1000"), () -> "keep");
			assertThat(kept).isZero();
			assertThat(this.redis.call("GET", "k")).isEqualTo(OTHER + ":1:0");
			assertThat((Long) this.redis.call("PTTL", "k")).isGreaterThan(59_000L);

			this.redis.call("SET", "k", OWNER + ":7:0", "PX", "60000");
			kept = commands.eval(LockScripts.KEEP, List.of("k"), List.of(OWNER, "1000"), () -> "keep");
			assertThat(kept).isOne();
			assertThat((Long) this.redis.call("PTTL", "k")).isBetween(900L, 1000L);
			// a renewal sent before the release reaches Redis after it: capped, no
			// extension
			List<Long> renewed = commands.eval(LockScripts.RENEW, List.of("k"), List.of(OWNER, "30000"), () -> "renew");
			assertThat(renewed.get(0)).isBetween(1L, 1000L);
			assertThat((Long) this.redis.call("PTTL", "k")).isBetween(1L, 1000L);
			assertThat((String) this.redis.call("GET", "k")).startsWith(OWNER + ":7:");
		}
	}

	@Test
	void aMinimumHoldLongerThanAFixedLeaseOrTheMaxHoldIsRejected() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).maxHoldTime(Duration.ofSeconds(10)).build()) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> locks.withLeaseTime(Duration.ofSeconds(2)).withMinHoldTime(Duration.ofSeconds(3)))
				.withMessageContaining("'minHoldTime' (PT3S) must not be longer than the fixed 'leaseTime' (PT2S)");
			assertThatIllegalArgumentException()
				.isThrownBy(() -> locks.withMinHoldTime(Duration.ofSeconds(3)).withLeaseTime(Duration.ofSeconds(2)))
				.withMessageContaining("must not be longer than the fixed 'leaseTime'");
			assertThatIllegalArgumentException().isThrownBy(() -> locks.withMinHoldTime(Duration.ofSeconds(11)))
				.withMessageContaining("must not be longer than the max-hold-time (PT10S)");
			assertThatIllegalArgumentException().isThrownBy(() -> locks.withMinHoldTime(Duration.ofSeconds(-1)));
			assertThat(locks.withLeaseTime(Duration.ofSeconds(3)).withMinHoldTime(Duration.ofSeconds(3))).isNotNull();
		}
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TestLocks.builder(this.client)
				.maxHoldTime(Duration.ofSeconds(10))
				.lockOverride("report", null, null, Duration.ofSeconds(20))
				.build())
			.withMessageContaining("'locks.report.min-hold-time' (PT20S) must not be longer than the max-hold-time");
	}

	@Test
	void aPerNameMinimumHoldAppliesToNamedCopies() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.lockOverride("report", null, null, Duration.ofSeconds(2))
			.build()) {
			locks.named("report").acquire("daily").close();
			locks.named("other").acquire("daily").close();
			assertThat((Long) this.redis.call("PTTL", "lockstep:report:daily")).isBetween(1500L, 2000L);
			assertThat(this.redis.call("PTTL", "lockstep:other:daily")).isEqualTo(-2L);
		}
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

}
