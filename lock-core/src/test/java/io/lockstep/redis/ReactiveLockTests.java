package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.Probes;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link ReactiveLockTemplate} on one Redis master: locked for the subscription, released
 * on complete, error and cancel, waiting without a thread, lease loss as an error signal.
 */
@RedisTest
class ReactiveLockTests {

	private RedisNode redis;

	private RedisClient client;

	private RedisClient probeClient;

	private RedisCommands<String, String> probe;

	@BeforeEach
	void start(RedisFixture fixture) {
		this.redis = fixture.standalone();
		this.client = TestLocks.client(this.redis);
		this.probeClient = TestLocks.client(this.redis);
		this.probe = this.probeClient.connect().sync();
	}

	@AfterEach
	void stop() {
		this.probeClient.shutdown();
		this.client.shutdown();
	}

	@Test
	void eightConcurrentSubscribersOnOneKeyNeverOverlap() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofMinutes(1)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			int subscribers = 8;
			int each = 250;
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicLong lastToken = new AtomicLong();
			AtomicInteger tokenViolations = new AtomicInteger();
			int[] counter = new int[1];
			Set<String> workThreads = ConcurrentHashMap.newKeySet();
			Mono<Integer> work = Mono.defer(() -> locks.execute("stock:1", (lock) -> Mono.fromCallable(() -> {
				if (inside.incrementAndGet() > 1) {
					overlaps.incrementAndGet();
				}
				if (lock.fencingToken() <= lastToken.getAndSet(lock.fencingToken())) {
					tokenViolations.incrementAndGet();
				}
				workThreads.add(Thread.currentThread().getName().replaceAll("\\d+$", "N"));
				// a non-atomic read-modify-write: lost updates show an overlap too
				int read = counter[0];
				return read;
			}).delayElement(Duration.ofMillis(1)).map((read) -> {
				counter[0] = read + 1;
				inside.decrementAndGet();
				return read;
			})));
			long start = System.nanoTime();
			Long done = Flux.range(0, subscribers)
				.flatMap((subscriber) -> Flux.range(0, each).concatMap((i) -> work).subscribeOn(Schedulers.parallel()),
						subscribers)
				.count()
				.block(Duration.ofMinutes(2));
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf(
					"reactive, %d subscribers on one key: %d overlaps, %d fencing-order violations, counter %d of %d, "
							+ "%d ms (%.0f acquisitions/s), work ran on %s%n",
					subscribers, overlaps.get(), tokenViolations.get(), counter[0], done, millis,
					done * 1000.0 / millis, workThreads);
			assertThat(done).isEqualTo(subscribers * each);
			assertThat(overlaps.get()).isZero();
			assertThat(tokenViolations.get()).isZero();
			assertThat(counter[0]).isEqualTo(subscribers * each);
			assertThat(this.probe.exists("lockstep:stock:1")).isZero();
			assertThat(Probes.engine(blocking).registered()).isZero();
			assertThat(Probes.engine(blocking).keysWaitedFor()).isZero();
		}
	}

	@Test
	void cancellingTheSubscriptionReleasesTheLockWithinOneRoundTrip() throws Exception {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			CountDownLatch running = new CountDownLatch(1);
			AtomicBoolean workCancelled = new AtomicBoolean();
			Disposable subscription = locks
				.execute("order:1",
						(lock) -> Mono.never()
							.doOnSubscribe((s) -> running.countDown())
							.doOnCancel(() -> workCancelled.set(true)))
				.subscribe();
			assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(this.probe.exists("lockstep:order:1")).isOne();
			long roundTrip = roundTripNanos();
			long cancelled = System.nanoTime();
			subscription.dispose();
			long gone = awaitGone("lockstep:order:1", Duration.ofSeconds(5));
			double millis = (gone - cancelled) / 1e6;
			System.out.printf("cancel to key gone: %.2f ms (a PING round trip: %.2f ms)%n", millis, roundTrip / 1e6);
			assertThat(workCancelled).isTrue();
			assertThat(millis).isLessThan(200);
			// the key goes when the script runs, the registry entry when its reply is in
			await().atMost(Duration.ofSeconds(2)).until(() -> Probes.engine(blocking).registered() == 0);
		}
	}

	@Test
	void cancellingWhileWaitingStopsWaitingAndNeverTakesTheLock() throws Exception {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(30)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			LockHandle holder = blocking.acquire("order:2");
			AtomicBoolean ran = new AtomicBoolean();
			Disposable waiting = locks.execute("order:2", (lock) -> Mono.fromRunnable(() -> ran.set(true))).subscribe();
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> Probes.engine(blocking).keysWaitedFor() == 1))
				.isTrue();
			waiting.dispose();
			assertThat(Probes.engine(blocking).keysWaitedFor()).isZero();
			// a cancel that comes while another event of the acquisition is being fed
			// leaves the Redis queue just after it (sent by the acquisition's worker):
			// released before that, the lock would be handed to the cancelled subscriber
			// until its leave arrives
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> this.probe.llen("lockstep:__q:order:2") == 0))
				.as("the cancelled subscriber left the Redis queue")
				.isTrue();
			holder.close();
			// a later acquisition gets the lock within 1 s of the release (a hand-off to
			// the cancelled subscriber is possible only until its leave lands, which a
			// cancel fed during another event sends just after it), never after the
			// cancelled subscriber's lease
			long released = System.nanoTime();
			try (LockHandle next = blocking.withWaitTime(Duration.ofSeconds(1)).acquire("order:2")) {
				System.out.printf("cancelled while waiting: the next caller got the lock %d ms after the release%n",
						(System.nanoTime() - released) / 1_000_000);
			}
			assertThat(ran).isFalse();
		}
	}

	@Test
	void aSubscriberCancelledWhileItsQueueingAttemptIsOnItsWayIsNeverHandedTheLock() throws Exception {
		try (ChaosProxy proxy = ChaosProxy.to(this.redis)) {
			RedisClient slow = RedisClient.create(RedisURI.create(proxy.host(), proxy.port()));
			StatefulRedisPubSubConnection<String, String> handOffs = this.probeClient.connectPubSub();
			try (RedisLockTemplate blocking = TestLocks.builder(slow).waitTime(Duration.ofSeconds(30)).build()) {
				ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
				LockHandle holder = blocking.acquire("order:9");
				// every hand-off told on any client's own channel
				List<String> told = new CopyOnWriteArrayList<>();
				handOffs.addListener(new RedisPubSubAdapter<>() {
					@Override
					public void message(String pattern, String channel, String message) {
						told.add(message);
					}
				});
				handOffs.sync().psubscribe("lockstep:__c:*");
				// 40 ms more each way: the cancel comes while the reply to the attempt
				// that
				// queued the subscriber is on its way back
				proxy.delay(40);
				AtomicBoolean ran = new AtomicBoolean();
				Disposable waiting = locks.execute("order:9", (lock) -> Mono.fromRunnable(() -> ran.set(true)))
					.subscribe();
				assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(10),
						() -> this.probe.llen("lockstep:__q:order:9") == 1))
					.as("the subscriber queued")
					.isTrue();
				waiting.dispose();
				holder.close();
				assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
						() -> this.probe.exists("lockstep:order:9") == 0))
					.as("the lock freed")
					.isTrue();
				proxy.pass();
				System.out.printf("cancelled while its queueing attempt was on its way: hand-offs told %s%n", told);
				assertThat(told).as("hand-offs told").noneMatch((message) -> message.startsWith("g:"));
				assertThat(ran).isFalse();
			}
			finally {
				handOffs.close();
				slow.shutdown();
			}
		}
	}

	@Test
	void aWaitingSubscriberIsWokenByTheRelease() throws Exception {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(30)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			LockHandle holder = blocking.acquire("order:3");
			AtomicLong acquiredAt = new AtomicLong();
			AtomicLong scriptsInside = new AtomicLong();
			Mono<String> waiting = locks.execute("order:3", (lock) -> Mono.fromCallable(() -> {
				acquiredAt.set(System.nanoTime());
				scriptsInside.set(TestLocks.commandCalls(this.redis, "evalsha"));
				return "ran";
			}));
			CountDownLatch done = new CountDownLatch(1);
			waiting.subscribe((value) -> done.countDown());
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> Probes.engine(blocking).keysWaitedFor() == 1))
				.isTrue();
			// queued in Redis for a direct hand-off
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> this.probe.exists("lockstep:__q:order:3") == 1))
				.isTrue();
			long scriptsBefore = TestLocks.commandCalls(this.redis, "evalsha");
			long released = System.nanoTime();
			holder.close();
			assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
			double millis = (acquiredAt.get() - released) / 1e6;
			long scripts = scriptsInside.get() - scriptsBefore;
			System.out.printf("release to waiting subscriber's work: %.2f ms (the periodic re-check is 500 ms), "
					+ "%d script call(s) from the release until the work ran%n", millis, scripts);
			// the release hands the lock to the queued subscriber (1 script); a head's
			// periodic re-check (every 500 ms) may fall in between
			assertThat(scripts).isLessThanOrEqualTo(2);
			// far sooner than the 500 ms re-check or the holder's 30 s lease: notified
			assertThat(millis).isLessThan(250);
		}
	}

	@Test
	void aLostLeaseEndsTheStreamWithLockLostException() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client)
			.leaseTime(Duration.ofMillis(900))
			.commandTimeout(Duration.ofMillis(200))
			.build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			AtomicBoolean workCancelled = new AtomicBoolean();
			AtomicLong deletedAt = new AtomicLong();
			Flux<Long> ticks = locks.executeMany("order:4",
					(lock) -> Flux.interval(Duration.ofMillis(50)).doOnCancel(() -> workCancelled.set(true)));
			StepVerifier.create(ticks).expectNextCount(3).then(() -> {
				deletedAt.set(System.nanoTime());
				assertThat(this.probe.del("lockstep:order:4")).isOne();
			}).thenConsumeWhile((tick) -> true).expectErrorSatisfies((error) -> {
				double millis = (System.nanoTime() - deletedAt.get()) / 1e6;
				System.out.printf("key deleted from outside: LockLostException in the stream after %.0f ms "
						+ "(renewal every 300 ms): %s%n", millis, error.getMessage());
				assertThat(error).isInstanceOf(LockLostException.class).hasMessageContaining("lockstep:order:4");
				assertThat(millis).isLessThan(300 + 1_000);
			}).verify(Duration.ofSeconds(10));
			assertThat(workCancelled).isTrue();
			assertThat(blocking.leasesLost()).isOne();
		}
	}

	@Test
	void notAcquiredWithinTheWaitTimeIsAnErrorAndTryExecuteIsEmpty() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking).withWaitTime(Duration.ofMillis(300));
			try (LockHandle holder = blocking.acquire("order:5")) {
				StepVerifier.create(locks.execute("order:5", (lock) -> Mono.just("ran")))
					.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LockAcquisitionException.class)
						.hasMessageContaining("lockstep:order:5"))
					.verify(Duration.ofSeconds(5));
				StepVerifier.create(locks.tryExecute("order:5", (lock) -> Mono.just("ran")))
					.expectComplete()
					.verify(Duration.ofSeconds(5));
			}
			StepVerifier.create(locks.tryExecute("order:5", (lock) -> Mono.just("ran")))
				.expectNext("ran")
				.expectComplete()
				.verify(Duration.ofSeconds(5));
		}
	}

	@Test
	void theWorkSeesTheFencingTokenInItsContextAndReentersHeldKeys() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(1)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			List<Long> tokens = locks
				.execute("order:6",
						(lock) -> ReactiveLockTemplate.currentFencingToken()
							.zipWith(locks.execute("order:6", (inner) -> Mono.just(inner.fencingToken())))
							.map((pair) -> List.of(lock.fencingToken(), pair.getT1(), pair.getT2())))
				.block(Duration.ofSeconds(5));
			assertThat(tokens).hasSize(3).containsOnly(tokens.get(0));
			StepVerifier.create(ReactiveLockTemplate.currentFencingToken()).expectComplete().verify();
		}
	}

	/**
	 * A reactive lock on more keys than its subscription holds acquires only the missing
	 * ones, as a blocking call does, and its end releases only those.
	 */
	@Test
	void aReactiveLockOnMoreKeysThanTheSubscriptionHoldsAcquiresOnlyTheMissingOnes() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(3)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			long start = System.nanoTime();
			AtomicLong innerHeld = new AtomicLong(-1);
			StepVerifier.create(
					locks
						.execute(
								"order:9", (
										outer) -> locks
											.executeAll(List.of("order:9", "order:10"),
													(inner) -> Mono.fromCallable(() -> innerHeld.getAndSet(this.probe
														.exists("lockstep:order:9", "lockstep:order:10"))))
											.then(Mono.fromCallable(() -> List.of(this.probe.exists("lockstep:order:9"),
													this.probe.exists("lockstep:order:10"))))))
				.expectNext(List.of(1L, 0L))
				.verifyComplete();
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("reactive superset: done after %d ms (wait time 3 s); keys held inside: %d%n", millis,
					innerHeld.get());
			assertThat(millis).isLessThan(1_500);
			assertThat(innerHeld.get()).as("both keys inside").isEqualTo(2);
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> this.probe.exists("lockstep:order:9", "lockstep:order:10") == 0))
				.isTrue();
		}
	}

	@Test
	void anErrorOfTheWorkReleasesTheLockAndReachesTheSubscriber() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			StepVerifier
				.create(locks.execute("order:7", (lock) -> Mono.error(new IllegalStateException("work failed"))))
				.expectErrorMessage("work failed")
				.verify(Duration.ofSeconds(5));
			assertThat(io.lockstep.test.Eventually.holds(Duration.ofSeconds(5),
					() -> this.probe.exists("lockstep:order:7") == 0))
				.isTrue();
		}
	}

	@Test
	void redisDownEndsTheStreamWithALockExceptionAndTheWorkNeverRuns(RedisFixture fixture) {
		RedisNode down = fixture.standalone();
		RedisClient client = TestLocks.client(down);
		down.kill();
		try (RedisLockTemplate blocking = TestLocks.builder(client)
			.waitTime(Duration.ofMillis(500))
			.commandTimeout(Duration.ofMillis(200))
			.build()) {
			AtomicBoolean ran = new AtomicBoolean();
			long start = System.nanoTime();
			StepVerifier
				.create(ReactiveLocks.of(blocking).execute("order:8", (lock) -> Mono.fromRunnable(() -> ran.set(true))))
				.expectErrorSatisfies((error) -> {
					System.out.printf("Redis down: %s after %d ms: %s%n", error.getClass().getSimpleName(),
							(System.nanoTime() - start) / 1_000_000, error.getMessage());
					assertThat(error).isExactlyInstanceOf(LockException.class).hasMessageContaining("lockstep:order:8");
				})
				.verify(Duration.ofSeconds(10));
			assertThat(ran).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	private long roundTripNanos() {
		long best = Long.MAX_VALUE;
		for (int i = 0; i < 20; i++) {
			long start = System.nanoTime();
			this.probe.ping();
			best = Math.min(best, System.nanoTime() - start);
		}
		return best;
	}

	/** Polls the key without pausing; returns when it was first seen gone. */
	private long awaitGone(String key, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (this.probe.exists(key) == 0) {
				return System.nanoTime();
			}
		}
		throw new AssertionError(key + " still exists after " + timeout);
	}

}
