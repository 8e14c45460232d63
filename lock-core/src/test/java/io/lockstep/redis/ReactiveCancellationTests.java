package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Cancelling a reactive acquisition ends it without a trace: nothing queued or held is
 * left, and no lease it never held is reported lost.
 */
@RedisTest
class ReactiveCancellationTests {

	private static final String KEY = "cancelled";

	/**
	 * Each round: a holder takes the key, a reactive subscription queues for it, the
	 * holder releases (the lock is handed to the subscription) and the subscription is
	 * cancelled 0 to 2.5 ms later. A handler of the {@code lockstep.held} observation
	 * that takes 2 ms (as a tracing handler may) widens the moment in which the hand-off
	 * becomes a held lease, so that many cancels land in it.
	 */
	@Test
	void cancellingAReactiveAcquisitionAsItsHandOffArrivesReportsNoLostLease(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient holderClient = TestLocks.client(redis);
		RedisClient subscriberClient = TestLocks.client(redis);
		List<LockLostEvent> events = new CopyOnWriteArrayList<>();
		int cancels = 100;
		ObservationRegistry observations = ObservationRegistry.create();
		observations.observationConfig().observationHandler(new SlowHeldObservationHandler());
		AtomicInteger entered = new AtomicInteger();
		try (RedisLockTemplate holder = TestLocks.builder(holderClient).waitTime(Duration.ofSeconds(5)).build();
				RedisLockTemplate subscriber = TestLocks.builder(subscriberClient)
					.waitTime(Duration.ofSeconds(10))
					.lockLostListener(events::add)
					.observationRegistry(observations, null)
					.build()) {
			TestLocks.warmUp(holder, subscriber);
			ReactiveLockTemplate reactive = reactive(subscriber);
			long start = System.nanoTime();
			for (int i = 0; i < cancels; i++) {
				LockHandle held = holder.acquire(KEY);
				Disposable subscription = reactive.execute(KEY, (lock) -> {
					entered.incrementAndGet();
					return Mono.never();
				}).subscribe();
				int attempt = i;
				assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength(redis) == 1))
					.as("subscription %d queued", attempt)
					.isTrue();
				held.close(); // hands the lock to the queued subscription
				// cancel as the hand-off arrives, give or take a few microseconds
				long spin = System.nanoTime()
						+ ThreadLocalRandom.current().nextLong(TimeUnit.MICROSECONDS.toNanos(300));
				while (System.nanoTime() < spin) {
					Thread.onSpinWait();
				}
				subscription.dispose();
			}
			long millis = (System.nanoTime() - start) / 1_000_000;
			// a loss is reported once the release of the lease taken meanwhile completes
			// (one round trip): wait for a late report a while
			Eventually.holds(Duration.ofSeconds(1), () -> !events.isEmpty());
			await("key and queue empty after the last cancel").atMost(Duration.ofSeconds(5))
				.until(() -> redis.call("EXISTS", "lockstep:" + KEY).equals(0L) && queueLength(redis) == 0);
			System.out.printf(
					"%d reactive acquisitions cancelled as the lock was handed to them (%d ms): %d entered their work, "
							+ "%d LockLostEvents, lease-lost count %d%s%n",
					cancels, millis, entered.get(), events.size(), subscriber.leasesLost(),
					events.isEmpty() ? "" : "; first: " + events.get(0).getReason());
			assertThat(events)
				.as("LockLostEvents for %d cancelled subscriptions (%d entered their work)", cancels, entered.get())
				.isEmpty();
			assertThat(subscriber.leasesLost()).as("leases counted lost").isZero();
		}
		finally {
			holderClient.shutdown();
			subscriberClient.shutdown();
		}
	}

	/** Takes 2 ms to start each {@code lockstep.held} observation. */
	private static final class SlowHeldObservationHandler implements ObservationHandler<Observation.Context> {

		@Override
		public void onStart(Observation.Context context) {
			if ("lockstep.held".equals(context.getName())) {
				long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2);
				while (System.nanoTime() < until) {
					Thread.onSpinWait();
				}
			}
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	/**
	 * A subscription cancelled while its attempt is on its way, Redis paused 40 ms and
	 * without the acquire script cached (every other script is): Redis refuses the
	 * attempt {@code NOSCRIPT} after the pause, runs the cancel's leave, and must not get
	 * the attempt again with its text after that (it would take the key for a token
	 * nobody holds, for a whole lease).
	 */
	@Test
	void aSubscriptionCancelledWhileItsAttemptIsRefusedNoscriptLeavesNoKey(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(Duration.ofSeconds(30))
			.waitTime(Duration.ofSeconds(5))
			.build()) {
			TestLocks.warmUp(locks);
			List<String> leftBehind = new ArrayList<>();
			for (int round = 0; round < 10; round++) {
				String key = "cancelled-noscript-" + round;
				redis.call("SCRIPT", "FLUSH");
				for (RedisScript<?> script : List.of(LockScripts.RELEASE, LockScripts.LEAVE, LockScripts.DELETE,
						LockScripts.RENEW, LockScripts.KEEP, LockScripts.CHECK)) {
					redis.call("SCRIPT", "LOAD", script.getScriptAsString());
				}
				redis.call("CLIENT", "PAUSE", "40", "ALL");
				// the attempt is on its way when subscribe returns; the cancel sends the
				// leave before dispose returns
				Disposable subscription = reactive(locks).execute(key, (lock) -> Mono.never()).subscribe();
				subscription.dispose();
				// on the lock's own connection: the first answer comes after the
				// attempt's NOSCRIPT, so the second is asked after any retry of it
				locks.isLocked(key);
				if (locks.isLocked(key)) {
					leftBehind.add(key + " (" + redis.call("PTTL", "lockstep:" + key) + " ms left)");
				}
			}
			System.out.printf("reactive subscriptions cancelled while their attempt was refused NOSCRIPT: %d of 10 "
					+ "left their key held %s%n", leftBehind.size(), leftBehind);
			assertThat(leftBehind).isEmpty();
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * The reactive template over the blocking one; the one internal entry point this
	 * class uses (the auto-configuration builds it the same way).
	 */
	private static ReactiveLockTemplate reactive(RedisLockTemplate template) {
		return ReactiveLocks.of(template);
	}

	private static long queueLength(RedisNode redis) {
		return (Long) redis.call("LLEN", "lockstep:__q:" + KEY);
	}

}
