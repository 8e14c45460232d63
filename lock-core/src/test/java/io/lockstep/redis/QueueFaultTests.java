package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The hand-off queue under faults: a queued waiter's JVM killed, the holder's JVM killed
 * while others queue, and Redis restarted empty while waiters queue. Nobody waits past
 * its wait time, no two callers are inside at once, and nothing is left queued.
 */
@RedisTest
class QueueFaultTests {

	private static final String QUEUE = "lockstep:__q:job";

	private final List<RedisClient> clients = new ArrayList<>();

	@AfterEach
	void shutdown() {
		this.clients.forEach(RedisClient::shutdown);
	}

	private RedisLockTemplate template(RedisNode redis, Duration lease) {
		RedisClient client = TestLocks.client(redis);
		this.clients.add(client);
		return TestLocks.builder(client)
			.leaseTime(lease)
			.commandTimeout(lease.dividedBy(4))
			.waitTime(Duration.ofSeconds(15))
			.build();
	}

	@Test
	void aQueuedWaiterWhoseJvmIsKilledHoldsUpTheNextAtMostItsLease(RedisFixture fixture) throws Exception {
		// a fixed lease is handed off whole
		long[] handedOff = deadQueuedWaiter(fixture.standalone(), "wait", 1000);
		System.out.printf("queued waiter JVM SIGKILLed (fixed lease 1000 ms): handed off for %d ms, the next waiter "
				+ "was inside %d ms after the release%n", handedOff[0], handedOff[1]);
		assertThat(handedOff[1]).as("held up by the dead waiter's lease at most, plus one re-check")
			.isLessThan(1000 + 1500);
	}

	@Test
	void aQueuedWaiterWithAWatchdogLeaseWhoseJvmIsKilledHoldsUpTheNextOnlyForTheShortHandOffGrant(RedisFixture fixture)
			throws Exception {
		long[] handedOff = deadQueuedWaiter(fixture.standalone(), "wait-renewed", 30_000);
		System.out.printf("queued waiter JVM SIGKILLed (watchdog lease 30 s): handed off for %d ms, the next waiter "
				+ "was inside %d ms after the release%n", handedOff[0], handedOff[1]);
		assertThat(handedOff[0]).as("the hand-off's grant, ms").isBetween(1L, Probes.handOffGrantMillis());
		assertThat(handedOff[1]).as("held up by the short hand-off grant at most, plus one re-check")
			.isLessThan(Probes.handOffGrantMillis() + 1500);
	}

	/**
	 * A worker JVM queues for "job" ({@link LockWorker}'s {@code mode}, with its lease),
	 * then a second waiter; the worker is SIGKILLed while its queue entry is live, and
	 * the holder releases, which hands the lock to the dead waiter.
	 * @return the lease of that hand-off (PTTL right after the release), and how long the
	 * second waiter then waited, in ms
	 */
	private long[] deadQueuedWaiter(RedisNode redis, String mode, long leaseMillis) throws Exception {
		try (RedisLockTemplate holder = template(redis, Duration.ofSeconds(30));
				RedisLockTemplate next = template(redis, Duration.ofSeconds(30));
				WorkerJvm worker = TestLocks.worker(mode, Integer.toString(redis.port()), "job",
						Long.toString(leaseMillis))) {
			LockHandle held = holder.acquire("job");
			worker.await("WAITING", Duration.ofSeconds(30));
			await().atMost(Duration.ofSeconds(10)).until(() -> queueLength(redis) == 1);
			CompletableFuture<Long> nextInside = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = next.acquire("job")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> queueLength(redis) == 2);
			worker.kill(); // SIGKILL while its queue entry is still live
			long released = System.nanoTime();
			held.close(); // hands the lock to the dead waiter
			long pttl = (Long) redis.call("PTTL", "lockstep:job");
			long waitedMillis = (nextInside.get(20, TimeUnit.SECONDS) - released) / 1_000_000;
			await().atMost(Duration.ofSeconds(2)).until(() -> queueLength(redis) == 0);
			return new long[] { pttl, waitedMillis };
		}
	}

	@Test
	void aHolderJvmKilledWhileOthersQueueFreesTheLockWithinItsLease(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		try (RedisLockTemplate first = template(redis, Duration.ofSeconds(30));
				RedisLockTemplate second = template(redis, Duration.ofSeconds(30));
				WorkerJvm worker = TestLocks.worker("hold", Integer.toString(redis.port()), "job", "1000")) {
			worker.await("ACQUIRED", Duration.ofSeconds(30));
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			List<CompletableFuture<Long>> waiters = new ArrayList<>();
			for (RedisLockTemplate locks : List.of(first, second)) {
				waiters.add(countedWaiter(locks, inside, overlaps));
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> queueLength(redis) == 2);
			long killed = System.nanoTime();
			worker.kill();
			long lastMillis = lastInsideMillis(waiters, killed, Duration.ofSeconds(10));
			System.out.printf("holder JVM SIGKILLed while 2 waiters queued: both inside within %d ms (lease 1000 ms),"
					+ " %d overlaps%n", lastMillis, overlaps.get());
			assertThat(overlaps.get()).isZero();
			assertThat(lastMillis).isLessThan(1000 + 1500);
			await().atMost(Duration.ofSeconds(2)).until(() -> queueLength(redis) == 0);
		}
	}

	@Test
	void aRedisRestartWhileWaitersQueueStrandsNobody(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		try (RedisLockTemplate holder = template(redis, Duration.ofSeconds(1));
				RedisLockTemplate first = template(redis, Duration.ofSeconds(1));
				RedisLockTemplate second = template(redis, Duration.ofSeconds(1))) {
			LockHandle held = holder.acquire("job");
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			List<CompletableFuture<Long>> waiters = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				RedisLockTemplate locks = (i % 2 == 0) ? first : second;
				waiters.add(countedWaiter(locks, inside, overlaps));
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> queueLength(redis) == 2);
			long restarted = System.nanoTime();
			redis.restart(); // no persistence: the key and the queue are gone
			long lastMillis = lastInsideMillis(waiters, restarted, Duration.ofSeconds(15));
			boolean holderLost = false;
			try {
				held.close();
			}
			catch (LockLostException ex) {
				holderLost = true;
			}
			System.out.printf("Redis restarted empty while 4 waiters (2 clients) waited: all inside within %d ms, "
					+ "%d overlaps, holder's loss reported: %s%n", lastMillis, overlaps.get(), holderLost);
			assertThat(overlaps.get()).isZero();
			assertThat(holderLost).isTrue();
			await().atMost(Duration.ofSeconds(2)).until(() -> queueLength(redis) == 0);
		}
	}

	/**
	 * A waiter for "job" that counts itself inside, and an overlap when another was
	 * inside too; completes with the {@code nanoTime} it got in.
	 */
	private static CompletableFuture<Long> countedWaiter(RedisLockTemplate locks, AtomicInteger inside,
			AtomicInteger overlaps) {
		return CompletableFuture.supplyAsync(() -> locks.execute("job", (lock) -> {
			if (inside.incrementAndGet() != 1) {
				overlaps.incrementAndGet();
			}
			inside.decrementAndGet();
			return System.nanoTime();
		}));
	}

	/** Milliseconds from {@code since} until the last of the waiters got in. */
	private static long lastInsideMillis(List<CompletableFuture<Long>> waiters, long since, Duration timeout)
			throws Exception {
		long last = 0;
		for (CompletableFuture<Long> waiter : waiters) {
			last = Math.max(last, (waiter.get(timeout.toMillis(), TimeUnit.MILLISECONDS) - since) / 1_000_000);
		}
		return last;
	}

	private static long queueLength(RedisNode redis) {
		return (Long) redis.call("LLEN", QUEUE);
	}

}
