package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.Probes;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Direct hand-off: a waiter that finds a one-key lock held queues itself in Redis; the
 * release hands the lock to the first live waiter (a fresh lease and fencing token) and
 * tells it on the key's channel, so its acquire completes without another attempt.
 * Waiters are served first come, first served; a waiter that gives up leaves the queue; a
 * queue entry that was not refreshed in time (its waiter vanished) is skipped. An
 * uncontended acquire and release cost 6 Redis commands, fencing included.
 */
@RedisTest
class HandOffTests {

	private static final String QUEUE = "lockstep:__q:job";

	private static final String TABLE = "lockstep:__w:job";

	private final RedisNode redis;

	private final List<RedisClient> clients = new ArrayList<>();

	HandOffTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void flush() {
		this.redis.call("FLUSHALL");
	}

	@AfterEach
	void shutdown() {
		this.clients.forEach(RedisClient::shutdown);
	}

	private RedisLockTemplate template() {
		RedisClient client = TestLocks.client(this.redis);
		this.clients.add(client);
		return TestLocks.builder(client).waitTime(Duration.ofSeconds(10)).build();
	}

	@Test
	void anUncontendedAcquireAndReleaseRunSixRedisCommands() {
		try (RedisLockTemplate locks = template()) {
			locks.acquire("warm-up").close(); // loads the scripts, connects
			int pairs = 100;
			long before = TestLocks.commandCalls(this.redis);
			for (int i = 0; i < pairs; i++) {
				locks.acquire("job").close();
			}
			double perPair = (double) (TestLocks.commandCalls(this.redis) - before) / pairs;
			System.out.printf("uncontended acquire + release: %.2f Redis commands per pair (incl. inside Lua)%n",
					perPair);
			assertThat(perPair).isEqualTo(6.0);
		}
	}

	@Test
	void anUncontendedPairStaysSixRedisCommandsAfterTheClientHasWaited() throws Exception {
		try (RedisLockTemplate holder = template(); RedisLockTemplate locks = template()) {
			// one wait first: from then on the client's callers queue with their first
			// attempt
			LockHandle first = holder.acquire("job");
			CompletableFuture<Inside> warmUp = waitFor(locks, 1);
			first.close();
			warmUp.get(5, TimeUnit.SECONDS);
			int pairs = 100;
			long before = TestLocks.commandCalls(this.redis);
			for (int i = 0; i < pairs; i++) {
				locks.acquire("job").close();
			}
			double perPair = (double) (TestLocks.commandCalls(this.redis) - before) / pairs;
			System.out.printf(
					"uncontended acquire + release by a client that has waited: %.2f Redis commands per " + "pair%n",
					perPair);
			assertThat(perPair).isEqualTo(6.0);
		}
	}

	@Test
	void aReleaseHandsTheLockToTheFirstQueuedWaiterWhoseAcquireThenCompletesWithoutAnotherAttempt() throws Exception {
		try (RedisLockTemplate holder = template();
				RedisLockTemplate first = template();
				RedisLockTemplate second = template()) {
			LockHandle held = holder.acquire("job");
			CompletableFuture<Inside> firstAcquired = waitFor(first, 1);
			CompletableFuture<Inside> secondAcquired = waitFor(second, 2);
			long fence = held.fencingToken();
			long scriptsBefore = TestLocks.commandCalls(this.redis, "evalsha");
			long released = System.nanoTime();
			held.close();
			Inside firstInside = firstAcquired.get(5, TimeUnit.SECONDS);
			// counted by the first waiter once inside: the release that handed it the
			// lock, and at most one attempt of its own
			long scripts = firstInside.scripts() - scriptsBefore;
			long handOffMicros = (firstInside.at() - released) / 1000;
			long firstToken = firstInside.token();
			long secondToken = secondAcquired.get(5, TimeUnit.SECONDS).token();
			System.out.printf(
					"hand-off: first queued waiter inside %d us after the release, %d script(s) in between; fencing "
							+ "tokens %d -> %d -> %d%n",
					handOffMicros, scripts, fence, firstToken, secondToken);
			assertThat(scripts).as("scripts from the release until the first waiter was inside").isLessThanOrEqualTo(2);
			assertThat(firstToken).isGreaterThan(fence);
			assertThat(secondToken).isGreaterThan(firstToken);
			assertThat(this.redis.call("EXISTS", QUEUE)).isEqualTo(0L);
		}
	}

	@Test
	void aWaiterWhoseClientHearsHandOffsAlreadyQueuesWithItsFirstAttempt() throws Exception {
		try (RedisLockTemplate holder = template(); RedisLockTemplate waiter = template()) {
			long scriptsToQueue = scriptsUntilQueued(holder, () -> waitFor(waiter, 1).thenApply(Inside::token));
			System.out.printf("a waiter alone in its client: %d script(s) until queued%n", scriptsToQueue);
			assertThat(scriptsToQueue).as("acquire scripts until the waiter was queued").isEqualTo(1);
		}
	}

	/**
	 * Once the waiting client heard one hand-off (its channel is subscribed for good),
	 * the acquire scripts a lone waiter of it runs until it is queued behind a holder;
	 * the lock is then handed to it with a higher fencing token.
	 * @param waiter starts a waiter for "job" of the second client and returns once it is
	 * queued; completes with its fencing token
	 */
	private long scriptsUntilQueued(RedisLockTemplate holder, Supplier<CompletableFuture<Long>> waiter)
			throws Exception {
		LockHandle first = holder.acquire("job");
		CompletableFuture<Long> warmUp = waiter.get();
		first.close();
		warmUp.get(5, TimeUnit.SECONDS);
		LockHandle held = holder.acquire("job");
		long scriptsBefore = TestLocks.commandCalls(this.redis, "evalsha");
		CompletableFuture<Long> acquired = waiter.get();
		long scriptsToQueue = TestLocks.commandCalls(this.redis, "evalsha") - scriptsBefore;
		held.close();
		assertThat(acquired.get(5, TimeUnit.SECONDS)).as("the token handed to the waiter")
			.isGreaterThan(held.fencingToken());
		return scriptsToQueue;
	}

	@Test
	void aWaiterHandedTheShortGrantOfAWatchdogLeaseKeepsTheLockPastIt() throws Exception {
		// default watchdog lease (30 s): a hand-off grants at most the hand-off grant (5
		// s),
		// and the new holder's watchdog extends it early, not a third of the lease later
		try (RedisLockTemplate holder = template(); RedisLockTemplate waiter = template()) {
			LockHandle held = holder.acquire("job");
			CompletableFuture<LockHandle> handedOff = CompletableFuture.supplyAsync(() -> waiter.acquire("job"));
			await("waiter queued").atMost(Duration.ofSeconds(5)).until(() -> queueLength() == 1);
			held.close();
			try (LockHandle lock = handedOff.get(5, TimeUnit.SECONDS)) {
				long granted = (Long) this.redis.call("PTTL", "lockstep:job");
				long start = System.nanoTime();
				boolean extended = Eventually.holds(Duration.ofMillis(Probes.handOffGrantMillis() - 1_000),
						() -> (Long) this.redis.call("PTTL", "lockstep:job") > Probes.handOffGrantMillis());
				long extendedAfter = (System.nanoTime() - start) / 1_000_000;
				System.out.printf("hand-off of a 30 s watchdog lease: granted %d ms, extended past the grant %d ms "
						+ "later: %s%n", granted, extendedAfter, extended);
				assertThat(granted).as("the hand-off's grant, ms").isBetween(1L, Probes.handOffGrantMillis());
				assertThat(extended).as("renewed before the short grant ran out").isTrue();
				assertThat(lock.isHeld()).isTrue();
			}
		}
	}

	@Test
	void aReactiveWaiterWhoseClientHearsHandOffsAlreadyQueuesWithItsFirstAttempt() throws Exception {
		try (RedisLockTemplate holder = template(); RedisLockTemplate waiter = template()) {
			ReactiveLockTemplate reactive = ReactiveLocks.of(waiter);
			long scriptsToQueue = scriptsUntilQueued(holder, () -> waitReactivelyFor(reactive, 1));
			System.out.printf("a reactive waiter alone in its client: %d script(s) until queued%n", scriptsToQueue);
			assertThat(scriptsToQueue).as("acquire scripts until the reactive waiter was queued").isEqualTo(1);
		}
	}

	/** Subscribes a reactive acquisition of "job" and waits until it is queued there. */
	private CompletableFuture<Long> waitReactivelyFor(ReactiveLockTemplate locks, int position) {
		CompletableFuture<Long> acquired = locks
			.execute("job", (lock) -> Mono.just(lock.fencingToken()).delayElement(Duration.ofMillis(50)))
			.toFuture();
		assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength() == position))
			.as("reactive waiter %d queued", position)
			.isTrue();
		return acquired;
	}

	@Test
	void aWaiterInTheHoldersOwnClientTakesTheHandOffMessageWithoutAskingAgain(RedisFixture fixture) throws Exception {
		// a server of its own: no other test's client runs scripts there meanwhile
		RedisNode own = fixture.standalone();
		RedisClient client = TestLocks.client(own);
		this.clients.add(client);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(10)).build()) {
			// one wait first: the client subscribes its hand-off channel for good
			LockHandle first = locks.acquire("job");
			CompletableFuture<Void> warmUp = CompletableFuture.runAsync(() -> locks.acquire("job").close(),
					Executors.newSingleThreadExecutor());
			await("warm-up waiter queued").atMost(Duration.ofSeconds(5))
				.until(() -> own.call("LLEN", QUEUE).equals(1L));
			first.close();
			warmUp.get(5, TimeUnit.SECONDS);
			int rounds = 50;
			CyclicBarrier start = new CyclicBarrier(2);
			java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
			long scriptsBefore = TestLocks.commandCalls(own, "evalsha");
			List<CompletableFuture<Void>> threads = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				threads.add(CompletableFuture.runAsync(() -> {
					try {
						start.await(5, TimeUnit.SECONDS);
						for (int i = 0; i < rounds; i++) {
							try (LockHandle lock = locks.acquire("job")) {
								if (inside.incrementAndGet() != 1) {
									overlaps.incrementAndGet();
								}
								// until the other thread waits behind this hold: queued
								// in Redis, or in the local queue, where this release
								// names it its successor (or it is done)
								await().atMost(Duration.ofSeconds(5))
									.until(() -> own.call("LLEN", QUEUE).equals(1L)
											|| Probes.engine(locks).waitersOf("lockstep:job") == 1
											|| finished.get() > 0);
								inside.decrementAndGet();
							}
						}
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
					finally {
						finished.incrementAndGet();
					}
				}, Executors.newSingleThreadExecutor()));
			}
			CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
			long scripts = TestLocks.commandCalls(own, "evalsha") - scriptsBefore;
			// each acquisition: its own queued attempt and its release, or its
			// release alone when a release named it its successor (the first two also
			// ask once more while the client subscribes); a waiter woken by the local
			// release instead of the hand-off message asks once more
			long extra = scripts - 2L * 2 * rounds;
			System.out.printf(
					"2 threads of one client, %d acquisitions, each held until the other queued: %d scripts (%d beyond 2 per "
							+ "acquisition), %d overlaps%n",
					2 * rounds, scripts, extra, overlaps.get());
			assertThat(overlaps.get()).isZero();
			assertThat(extra).as("scripts beyond an attempt and a release per acquisition").isLessThanOrEqualTo(1);
		}
	}

	@Test
	void aWaiterBehindAHolderOfItsOwnClientIsHandedTheLockByTheReleaseWithoutAsking(RedisFixture fixture)
			throws Exception {
		// a server of its own: no other test's client runs scripts there meanwhile
		RedisNode own = fixture.standalone();
		RedisClient holderClient = TestLocks.client(own);
		RedisClient client = TestLocks.client(own);
		this.clients.add(holderClient);
		this.clients.add(client);
		try (RedisLockTemplate holder = TestLocks.builder(holderClient).build();
				RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(10)).build()) {
			TestLocks.warmUp(locks);
			// another client holds; of this client's two callers, the first queues in
			// Redis, the second waits in the local queue behind it
			LockHandle held = holder.acquire("job");
			List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
			Supplier<CompletableFuture<Void>> caller = () -> CompletableFuture.runAsync(() -> {
				try (LockHandle lock = locks.acquire("job")) {
					tokens.add(lock.fencingToken());
				}
			}, Executors.newSingleThreadExecutor());
			CompletableFuture<Void> first = caller.get();
			await("the first caller queued").atMost(Duration.ofSeconds(5))
				.until(() -> own.call("LLEN", QUEUE).equals(1L));
			CompletableFuture<Void> second = caller.get();
			await("the second caller waits locally").atMost(Duration.ofSeconds(5))
				.until(() -> Probes.engine(locks).waitersOf("lockstep:job") == 2);
			long scriptsBefore = TestLocks.commandCalls(own, "evalsha");
			held.close();
			CompletableFuture.allOf(first, second).get(10, TimeUnit.SECONDS);
			long scripts = TestLocks.commandCalls(own, "evalsha") - scriptsBefore;
			// the holder's release hands the lock to the first by message; the first,
			// inside, made the second the head behind it, and its release hands the
			// lock to the second, which hears it from that release's reply: three
			// releases, and no attempt of the second's
			System.out.printf("two callers of one client behind another client's hold: %d scripts, tokens %s%n",
					scripts, tokens);
			assertThat(scripts).as("scripts from the holder's release on").isEqualTo(3);
			assertThat(tokens).hasSize(2);
			assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
			assertThat(own.call("EXISTS", "lockstep:job")).isEqualTo(0L);
		}
	}

	/**
	 * A caller waiting behind another caller of its client whose release names no
	 * successor (its lock has a max hold, a lock delay, or is a read lock ahead of a
	 * writer) asks when that release comes, not at its next re-check (500 ms).
	 */
	@ParameterizedTest
	@ValueSource(strings = { "max hold", "lock delay", "reader ahead" })
	void aCallerBehindAHolderWhoseReleaseNamesNoSuccessorAsksAtThatRelease(String mode) throws Exception {
		RedisClient client = TestLocks.client(this.redis);
		this.clients.add(client);
		RedisLockTemplateBuilder builder = TestLocks.builder(client).waitTime(Duration.ofSeconds(10));
		if (mode.equals("max hold")) {
			builder.maxHoldTime(Duration.ofSeconds(60));
		}
		if (mode.equals("lock delay")) {
			builder.lockDelay(Duration.ofMillis(100));
		}
		try (RedisLockTemplate locks = builder.build()) {
			TestLocks.warmUp(locks);
			io.lockstep.LockTemplate others = mode.equals("reader ahead") ? locks.write() : locks;
			io.lockstep.LockTemplate middle = mode.equals("reader ahead") ? locks.read() : locks;
			LockHandle held = others.acquire("job");
			CompletableFuture<Long> middleReleased = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = middle.acquire("job")) {
					return System.nanoTime();
				}
			}, Executors.newSingleThreadExecutor());
			await().atMost(Duration.ofSeconds(5)).until(() -> queueLength() == 1);
			CompletableFuture<Long> last = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = others.acquire("job")) {
					return System.nanoTime();
				}
			}, Executors.newSingleThreadExecutor());
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(locks).waitersOf("lockstep:job") == 2);
			held.close();
			long after = (last.get(5, TimeUnit.SECONDS) - middleReleased.get(5, TimeUnit.SECONDS)) / 1_000_000;
			System.out.printf("%s: the caller behind got the lock %d ms after the release before it%n", mode, after);
			assertThat(after).as("ms after the release before it (the head's re-check: 500)").isLessThan(250L);
		}
	}

	/**
	 * Callers of one client, half of them waiting 2 ms at most, so that many give up
	 * while a release may be naming them its successor: no two are ever inside at once,
	 * and what a release handed to one that gave up is given back, so the key is free
	 * soon after the last release, not a hand-off lease (5 s) later.
	 */
	@Test
	void callersOfOneClientThatGiveUpWhileAReleaseNamesThemLeaveNothingHeld(RedisFixture fixture) throws Exception {
		RedisNode own = fixture.standalone();
		RedisClient client = TestLocks.client(own);
		this.clients.add(client);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(10)).build()) {
			TestLocks.warmUp(locks);
			io.lockstep.LockTemplate impatient = locks.withWaitTime(Duration.ofMillis(2));
			java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger acquired = new java.util.concurrent.atomic.AtomicInteger();
			java.util.concurrent.atomic.AtomicInteger gaveUp = new java.util.concurrent.atomic.AtomicInteger();
			long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
			List<CompletableFuture<Void>> callers = new ArrayList<>();
			for (int t = 0; t < 6; t++) {
				io.lockstep.LockTemplate template = (t % 2 == 0) ? impatient : locks;
				callers.add(CompletableFuture.runAsync(() -> {
					while (System.nanoTime() < end) {
						java.util.Optional<LockHandle> lock = template.tryAcquire("job");
						if (lock.isEmpty()) {
							gaveUp.incrementAndGet();
							continue;
						}
						try (LockHandle held = lock.get()) {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							acquired.incrementAndGet();
							inside.decrementAndGet();
						}
					}
				}, Executors.newSingleThreadExecutor()));
			}
			CompletableFuture.allOf(callers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
			boolean freed = Eventually.holds(Duration.ofSeconds(1), () -> !TestLocks.exists(own, "lockstep:job"));
			System.out.printf(
					"6 callers of one client, half waiting 2 ms at most: %d acquisitions, %d gave up, "
							+ "%d overlaps, key free within 1 s: %s%n",
					acquired.get(), gaveUp.get(), overlaps.get(), freed);
			assertThat(overlaps.get()).isZero();
			assertThat(acquired.get()).isPositive();
			assertThat(gaveUp.get()).isPositive();
			assertThat(freed).as("the key free within 1 s of the last release").isTrue();
		}
	}

	/**
	 * A waiter was inside with this fencing token at this {@code nanoTime}, when Redis
	 * had run this many scripts.
	 */
	record Inside(long token, long at, long scripts) {
	}

	/**
	 * Starts a waiter that, once inside, notes its fencing token, the time and the
	 * scripts Redis ran, and releases; waits until it is the {@code position}-th in the
	 * queue.
	 */
	private CompletableFuture<Inside> waitFor(RedisLockTemplate locks, int position) {
		CompletableFuture<Inside> acquired = CompletableFuture.supplyAsync(() -> {
			try (LockHandle lock = locks.acquire("job")) {
				long at = System.nanoTime();
				return new Inside(lock.fencingToken(), at, TestLocks.commandCalls(this.redis, "evalsha"));
			}
		});
		await("waiter " + position + " queued").atMost(Duration.ofSeconds(5)).until(() -> queueLength() == position);
		return acquired;
	}

	private long queueLength() {
		return (Long) this.redis.call("LLEN", QUEUE);
	}

	@Test
	void aWaiterThatGivesUpLeavesTheQueue() {
		try (RedisLockTemplate holder = template(); RedisLockTemplate waiter = template()) {
			try (LockHandle held = holder.acquire("job")) {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> waiter.withWaitTime(Duration.ofMillis(300)).acquire("job"));
				await("queue empty after the waiter gave up").atMost(Duration.ofSeconds(2))
					.until(() -> queueLength() == 0 && this.redis.call("HLEN", TABLE).equals(0L));
			}
			assertThat(this.redis.call("EXISTS", "lockstep:job")).as("released, not handed to the waiter that left")
				.isEqualTo(0L);
		}
	}

	@Test
	void aQueueEntryNotRefreshedInTimeIsSkipped() throws Exception {
		try (RedisLockTemplate holder = template(); RedisLockTemplate waiter = template()) {
			LockHandle held = holder.acquire("job");
			// a waiter that vanished: its entry expired a second ago
			this.redis.call("RPUSH", QUEUE, "0123456789abcdef0123456789abcdef");
			this.redis.call("HSET", TABLE, "0123456789abcdef0123456789abcdef", "1000:30000:0");
			CompletableFuture<Inside> live = waitFor(waiter, 2);
			held.close();
			long token = live.get(5, TimeUnit.SECONDS).token();
			System.out.printf("a vanished waiter's expired entry was skipped; the live waiter got token %d%n", token);
			assertThat(token).isGreaterThan(held.fencingToken());
		}
	}

}
