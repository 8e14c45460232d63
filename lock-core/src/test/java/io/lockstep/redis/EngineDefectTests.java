package io.lockstep.redis;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Regression tests for defects of the lease engine: max-hold-time, renewal bound to the
 * handle, releases racing renewals, failing listeners, closed copies and failed releases.
 * Each fails on the engine that had the defect.
 */
@RedisTest
class EngineDefectTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void theFirstLeaseIsCappedByMaxHoldTime(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(Duration.ofSeconds(3))
			.maxHoldTime(Duration.ofMillis(800))
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			LockHandle lock = locks.acquire("capped:first");
			long pttl = (Long) redis.call("PTTL", "lockstep:capped:first");
			System.out.printf("lease 3000 ms, max-hold-time 800 ms: PTTL right after acquire %d ms%n", pttl);
			closeQuietly(lock);
			assertThat(pttl).as("PTTL of the key right after acquire (max-hold-time 800 ms)")
				.isPositive()
				.isLessThanOrEqualTo(800);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void isHeldTurnsFalseByTheTimeMaxHoldTimeExpiresTheKey(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		Duration lease = Duration.ofMillis(1_200);
		Duration maxHold = Duration.ofMillis(700);
		// a renewal falls due at 400 ms, before max-hold-time, and grants what is left
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(lease)
			.maxHoldTime(maxHold)
			.commandTimeout(COMMAND_TIMEOUT)
			.build(); RedisLockTemplate other = TestLocks.builder(client).commandTimeout(COMMAND_TIMEOUT).build()) {
			long start = System.nanoTime();
			LockHandle lock = locks.acquire("capped:held");
			assertThat(TestLocks.eventually(maxHold.plus(lease).plusSeconds(1),
					() -> !exists(redis, "lockstep:capped:held")))
				.as("the key expires at max-hold-time")
				.isTrue();
			long goneMillis = (System.nanoTime() - start) / 1_000_000;
			boolean turnedFalse = TestLocks.eventually(Duration.ofMillis(50), () -> !lock.isHeld());
			long heldUntilMillis = goneMillis;
			if (!turnedFalse) {
				TestLocks.eventually(lease, () -> !lock.isHeld());
				heldUntilMillis = (System.nanoTime() - start) / 1_000_000;
			}
			System.out.printf("max-hold-time %d ms, lease %d ms: key gone after %d ms, isHeld() %s%n",
					maxHold.toMillis(), lease.toMillis(), goneMillis,
					turnedFalse ? "false within 50 ms" : "still true until " + heldUntilMillis + " ms");
			assertThat(turnedFalse)
				.as("isHeld() false within 50 ms of the key expiring after %d ms (true until %d ms)", goneMillis,
						heldUntilMillis)
				.isTrue();
			Optional<LockHandle> next = other.tryAcquire("capped:held");
			assertThat(next).as("another owner takes the expired key").isPresent();
			assertThat(lock.isHeld()).as("isHeld() once another owner holds the key").isFalse();
			next.get().close();
			closeQuietly(lock);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aHandleStaysRenewedAfterTheThreadThatAcquiredItEnds(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			AtomicReference<LockHandle> handle = new AtomicReference<>();
			Thread acquirer = new Thread(() -> handle.set(locks.acquire("handed:over")), "short-lived-acquirer");
			acquirer.start();
			acquirer.join(5_000);
			assertThat(acquirer.isAlive()).isFalse();
			LockHandle lock = handle.get();
			assertThat(lock).as("handle acquired on the short-lived thread").isNotNull();
			Presence presence = Presence.watch(redis, "lockstep:handed:over", LEASE.multipliedBy(3));
			System.out.printf("acquiring thread ended: key present at %s over 3 leases of %d ms%n", presence,
					LEASE.toMillis());
			assertThat(presence.present())
				.as("checks finding the key of a handle whose acquiring thread ended (%s)", presence)
				.isEqualTo(presence.checks());
			assertThat(lock.isHeld()).isTrue();
			lock.close();
			assertThat(exists(redis, "lockstep:handed:over")).as("key after close() on the test thread").isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aHandleDroppedWithoutCloseStopsBeingRenewedOnceCollected(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			// acquired on this thread, which stays alive: only the dropped handle ends
			// the
			// renewal
			WeakReference<LockHandle> dropped = acquireAndDrop(locks, "dropped");
			long start = System.nanoTime();
			boolean collected = TestLocks.eventually(Duration.ofSeconds(10), () -> {
				System.gc();
				return dropped.get() == null;
			});
			long collectedMillis = (System.nanoTime() - start) / 1_000_000;
			assertThat(collected).as("the dropped handle was garbage-collected").isTrue();
			long collectedAt = System.nanoTime();
			boolean expired = TestLocks.eventually(LEASE.plusMillis(1_500), () -> !exists(redis, "lockstep:dropped"));
			long expiredMillis = (System.nanoTime() - collectedAt) / 1_000_000;
			System.out.printf("dropped handle collected after %d ms; key %s %d ms later (lease %d ms)%n",
					collectedMillis, expired ? "expired" : "still renewed", expiredMillis, LEASE.toMillis());
			assertThat(expired).as("the key of a collected handle expires within lease + 1500 ms").isTrue();
		}
		finally {
			client.shutdown();
		}
	}

	private static WeakReference<LockHandle> acquireAndDrop(RedisLockTemplate locks, String key) {
		return new WeakReference<>(locks.acquire(key));
	}

	@Test
	void aReleaseRacingARenewalIsNeverReportedAsALoss(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		List<RaceRig> rigs = new ArrayList<>();
		ExecutorService closers = Executors.newFixedThreadPool(RaceRig.TEMPLATES);
		int staged = 0;
		int lostAtClose = 0;
		int otherFailures = 0;
		try {
			for (int i = 0; i < RaceRig.TEMPLATES; i++) {
				rigs.add(new RaceRig(client));
			}
			long lostBefore = rigs.stream().mapToLong((rig) -> rig.locks.leasesLost()).sum();
			for (int round = 0; round < RaceRig.ROUNDS; round++) {
				for (int i = 0; i < rigs.size(); i++) {
					rigs.get(i).arm("race:" + round + ":" + i);
				}
				long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
				for (RaceRig rig : rigs) {
					if (rig.blocked.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
						staged++;
					}
				}
				List<Future<Throwable>> closes = new ArrayList<>();
				List<Thread> closing = new CopyOnWriteArrayList<>();
				redis.pause();
				try {
					for (RaceRig rig : rigs) {
						closes.add(closers.submit(() -> {
							closing.add(Thread.currentThread());
							return catchThrowable(rig.renewed::close);
						}));
					}
					// every release is on its way to the stopped Redis: now let the
					// renewals decided before it follow
					TestLocks.eventually(Duration.ofSeconds(2), () -> closing.size() == rigs.size()
							&& closing.stream().allMatch(EngineDefectTests::parked));
					rigs.forEach(RaceRig::open);
					for (RaceRig rig : rigs) {
						rig.returned.await(2, TimeUnit.SECONDS);
					}
					TestLocks.eventually(Duration.ofSeconds(2), () -> rigs.stream().allMatch(RaceRig::listenerIdle));
				}
				finally {
					redis.resume();
				}
				for (Future<Throwable> close : closes) {
					Throwable failure = close.get(10, TimeUnit.SECONDS);
					if (failure instanceof LockLostException) {
						lostAtClose++;
					}
					else if (failure != null) {
						otherFailures++;
						System.out.printf("round %d: release failed without a loss: %s%n", round, failure);
					}
				}
				rigs.forEach(RaceRig::closeFixed);
			}
			// late reports of the last round have a renewal period to arrive
			TestLocks.eventually(LEASE.dividedBy(3), () -> false);
			int reported = rigs.stream().mapToInt((rig) -> rig.renewedLosses.size()).sum();
			long fixedLosses = rigs.stream().mapToLong((rig) -> rig.fixedLosses.get()).sum();
			long counted = rigs.stream().mapToLong((rig) -> rig.locks.leasesLost()).sum() - lostBefore;
			System.out.printf(
					"release racing renewal: %d releases (%d with the watchdog held mid-pass), false losses: %d "
							+ "LockLostException at close, %d listener events; leasesLost() +%d of which %d fixed "
							+ "leases ran out; %d releases failed otherwise%n",
					RaceRig.ROUNDS * RaceRig.TEMPLATES, staged, lostAtClose, reported, counted, fixedLosses,
					otherFailures);
			assertThat(lostAtClose).as("LockLostException from close() of a lease released while held").isZero();
			assertThat(reported).as("lost-lease events for leases released while held").isZero();
		}
		finally {
			rigs.forEach(RaceRig::close);
			closers.shutdownNow();
			client.shutdown();
		}
	}

	@Test
	void anErrorThrownByALockLostListenerDoesNotStopRenewals(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		AtomicInteger thrown = new AtomicInteger();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.lockLostListener((event) -> {
				thrown.incrementAndGet();
				throw new Error("listener failure on purpose: " + event.getKey());
			})
			.build()) {
			LockHandle kept = locks.acquire("errors:kept");
			LockHandle deleted = locks.acquire("errors:deleted");
			redis.call("DEL", "lockstep:errors:deleted");
			assertThat(TestLocks.eventually(Duration.ofSeconds(3), () -> thrown.get() >= 1))
				.as("the listener ran for the deleted key")
				.isTrue();
			// a fixed lease running out while held is reported too (the watchdog's own
			// detection, not a renewal reply)
			LockHandle fixed = locks.withLeaseTime(Duration.ofMillis(200)).acquire("errors:fixed");
			TestLocks.eventually(Duration.ofSeconds(2), () -> thrown.get() >= 2);
			Presence presence = Presence.watch(redis, "lockstep:errors:kept", LEASE.multipliedBy(4));
			System.out.printf("listener threw %d Error(s); key of a held lock present at %s over 4 leases%n",
					thrown.get(), presence);
			assertThat(presence.present())
				.as("checks finding the key of a held lock after %d listener Error(s) (%s)", thrown.get(), presence)
				.isEqualTo(presence.checks());
			assertThat(kept.isHeld()).isTrue();
			kept.close();
			closeQuietly(deleted);
			closeQuietly(fixed);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void closingAConfiguredCopyLeavesTheTemplateWorking(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			LockHandle held = locks.acquire("copy:held");
			try (RedisLockTemplate copy = locks.withWaitTime(Duration.ofSeconds(1))) {
				copy.tryAcquire("copy:x").ifPresent(LockHandle::close);
			}
			Presence presence = Presence.watch(redis, "lockstep:copy:held", LEASE.multipliedBy(3));
			Throwable failure = catchThrowable(() -> locks.acquire("copy:y").close());
			System.out.printf("copy closed: key of a held lock present at %s over 3 leases; acquire after: %s%n",
					presence, (failure != null) ? failure : "ok");
			assertThat(presence.present())
				.as("checks finding the key of a lock held through the template after a copy was closed (%s)", presence)
				.isEqualTo(presence.checks());
			assertThat(failure).as("acquire through the template after a copy was closed").isNull();
			assertThat(held.isHeld()).isTrue();
			held.close();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aReleaseThatFailsAfterTheWorkCompletedDoesNotFailTheCall(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		AtomicBoolean paused = new AtomicBoolean();
		AtomicReference<String> result = new AtomicReference<>();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(Duration.ofSeconds(5))
			.commandTimeout(COMMAND_TIMEOUT)
			.build()) {
			long start = System.nanoTime();
			Throwable failure;
			try {
				failure = catchThrowable(() -> result.set(locks.execute("release:fails", (lock) -> {
					redis.pause();
					paused.set(true);
					return "done";
				})));
			}
			finally {
				if (paused.get()) {
					redis.resume();
				}
			}
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf(
					"Redis stopped as the work returned: execute() ended after %d ms with %s; %d leases lost%n", millis,
					(failure != null) ? failure : "result '" + result.get() + "'", locks.leasesLost());
			assertThat(paused.get()).isTrue();
			assertThat(failure).as("execute() whose release failed after the work completed").isNull();
			assertThat(result.get()).isEqualTo("done");
		}
		finally {
			client.shutdown();
		}
	}

	/** Whether a key was found at each check, every 50 ms for a while. */
	private record Presence(int checks, int present, long firstMissingMillis) {

		static Presence watch(RedisNode redis, String key, Duration duration) {
			long start = System.nanoTime();
			long end = start + duration.toNanos();
			int checks = 0;
			int present = 0;
			long firstMissing = -1;
			while (System.nanoTime() < end) {
				if (exists(redis, key)) {
					present++;
				}
				else if (firstMissing < 0) {
					firstMissing = (System.nanoTime() - start) / 1_000_000;
				}
				checks++;
				TestLocks.eventually(Duration.ofMillis(50), () -> false);
			}
			return new Presence(checks, present, firstMissing);
		}

		@Override
		public String toString() {
			return this.present + " of " + this.checks + " checks" + ((this.firstMissingMillis >= 0)
					? ", first missing after " + this.firstMissingMillis + " ms" : "");
		}

	}

	private static boolean exists(RedisNode redis, String key) {
		return ((Long) redis.call("EXISTS", key)) == 1L;
	}

	private static boolean parked(Thread thread) {
		Thread.State state = thread.getState();
		return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
	}

	private static void closeQuietly(LockHandle lock) {
		try {
			lock.close();
		}
		catch (LockException ex) {
			// lost or unreachable: not what the test checks
		}
	}

	/**
	 * One template holding a watchdog lease and {@value #FIXED} fixed leases that run out
	 * just before that lease falls due for renewal, with a listener that holds back the
	 * report of the last of them until {@link #open()}. A watchdog that decides in one
	 * pass which leases to renew and which are lost has then decided to renew the
	 * watchdog lease, but has not sent the renewal yet, while the test releases it.
	 * Several templates race at once: each has its own connection and threads.
	 */
	private static final class RaceRig implements AutoCloseable {

		static final int TEMPLATES = 4;

		static final int ROUNDS = 6;

		static final int FIXED = 4;

		final RedisLockTemplate locks;

		final AtomicInteger fixedLosses = new AtomicInteger();

		final List<LockLostEvent> renewedLosses = new CopyOnWriteArrayList<>();

		final List<LockHandle> fixed = new ArrayList<>();

		final AtomicInteger fixedInRound = new AtomicInteger();

		volatile CountDownLatch gate = new CountDownLatch(0);

		volatile CountDownLatch blocked = new CountDownLatch(0);

		volatile CountDownLatch returned = new CountDownLatch(0);

		volatile Thread listenerThread;

		LockHandle renewed;

		RaceRig(RedisClient client) {
			this.locks = TestLocks.builder(client)
				.leaseTime(LEASE)
				.commandTimeout(COMMAND_TIMEOUT)
				.lockLostListener(this::lost)
				.build();
		}

		void arm(String key) {
			this.gate = new CountDownLatch(1);
			this.blocked = new CountDownLatch(1);
			this.returned = new CountDownLatch(1);
			this.listenerThread = null;
			this.fixedInRound.set(0);
			long start = System.nanoTime();
			this.renewed = this.locks.acquire(key);
			// the watchdog lease falls due a third of the lease after acquisition; the
			// fixed leases run out 1 ms before by the client's clock, which takes a drift
			// allowance of 1% + 2 ms off every lease
			long due = start + LEASE.dividedBy(3).toNanos() - TimeUnit.MILLISECONDS.toNanos(1);
			for (int i = 0; i < FIXED; i++) {
				double left = (due - System.nanoTime()) / 1_000_000.0;
				long millis = Math.max(30, (long) Math.ceil((left + 2) * 100 / 99));
				this.fixed.add(this.locks.withLeaseTime(Duration.ofMillis(millis)).acquire(key + ":fixed:" + i));
			}
		}

		private void lost(LockLostEvent event) {
			if (!event.getKey().contains(":fixed:")) {
				this.renewedLosses.add(event);
				return;
			}
			this.fixedLosses.incrementAndGet();
			if (this.fixedInRound.incrementAndGet() == FIXED) {
				this.listenerThread = Thread.currentThread();
				this.blocked.countDown();
				try {
					this.gate.await(3, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				this.returned.countDown();
			}
		}

		void open() {
			this.gate.countDown();
		}

		boolean listenerIdle() {
			Thread thread = this.listenerThread;
			return thread == null || parked(thread);
		}

		void closeFixed() {
			this.fixed.forEach(EngineDefectTests::closeQuietly);
			this.fixed.clear();
		}

		@Override
		public void close() {
			open();
			closeFixed();
			this.locks.close();
		}

	}

}
