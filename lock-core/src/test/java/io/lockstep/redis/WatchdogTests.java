package io.lockstep.redis;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Leases: renewed while the holder works, expiring when it dies, fixed leases expiring on
 * time, and renewal bound to the guarded work.
 */
@RedisTest
class WatchdogTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private final RedisNode redis;

	private RedisClient client;

	WatchdogTests(RedisNode redis) {
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

	private RedisLockTemplateBuilder locks() {
		return TestLocks.builder(this.client).leaseTime(LEASE).commandTimeout(Duration.ofMillis(200));
	}

	@Test
	void watchdogHoldsTheLockForFiveLeases() {
		try (RedisLockTemplate holder = locks().build(); RedisLockTemplate other = locks().build()) {
			LockHandle lock = holder.acquire("job:1");
			long end = System.nanoTime() + LEASE.multipliedBy(5).toNanos();
			int checks = 0;
			while (System.nanoTime() < end) {
				assertThat(other.tryAcquire("job:1")).as("acquired by another owner after %d checks", checks).isEmpty();
				assertThat(lock.isHeld()).isTrue();
				checks++;
				Eventually.holds(Duration.ofMillis(50), () -> false);
			}
			lock.close();
			assertThat(holder.leasesLost()).isZero();
			assertThat(other.tryAcquire("job:1")).isPresent().get().satisfies(LockHandle::close);
			System.out.printf("watchdog: lease %d ms held for %d ms, %d checks by another owner all refused%n",
					LEASE.toMillis(), LEASE.multipliedBy(5).toMillis(), checks);
		}
	}

	@Test
	void killedHolderJvmFreesTheLockWithinOneLease() {
		long leaseMillis = 1_000;
		try (WorkerJvm holder = TestLocks.worker("hold", Integer.toString(this.redis.port()), "job:2",
				Long.toString(leaseMillis));
				RedisLockTemplate locks = locks().waitTime(Duration.ofSeconds(10)).build()) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			// the other JVM's watchdog keeps it for 5 leases
			long until = System.nanoTime() + Duration.ofMillis(leaseMillis * 5).toNanos();
			while (System.nanoTime() < until) {
				assertThat(locks.tryAcquire("job:2")).isEmpty();
				Eventually.holds(Duration.ofMillis(100), () -> false);
			}
			holder.kill();
			long killed = System.nanoTime();
			try (LockHandle lock = locks.acquire("job:2")) {
				long freedMillis = (System.nanoTime() - killed) / 1_000_000;
				System.out.printf("holder JVM SIGKILLed after 5 leases; lock acquired %d ms later (lease %d ms)%n",
						freedMillis, leaseMillis);
				assertThat(freedMillis).isLessThanOrEqualTo(leaseMillis + 300);
			}
		}
	}

	@Test
	void aHolderKilledBeforeItsFirstRenewalFreesTheLockWithinOneLease() {
		long leaseMillis = 3_000;
		try (WorkerJvm holder = TestLocks.worker("hold", Integer.toString(this.redis.port()), "job:2b",
				Long.toString(leaseMillis));
				RedisLockTemplate locks = locks().waitTime(Duration.ofSeconds(10)).build()) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			holder.kill();
			long killed = System.nanoTime();
			assertThat(locks.isLocked("job:2b")).isTrue();
			try (LockHandle lock = locks.acquire("job:2b")) {
				long freedMillis = (System.nanoTime() - killed) / 1_000_000;
				System.out.printf(
						"holder JVM SIGKILLed before its first renewal; lock acquired %d ms later (lease %d ms)%n",
						freedMillis, leaseMillis);
				assertThat(freedMillis).isLessThanOrEqualTo(leaseMillis + 300);
			}
		}
	}

	@Test
	void fixedLeaseExpiresOnTimeAndTheLateReleaseSparesTheNextOwner() {
		try (RedisLockTemplate first = locks().build(); RedisLockTemplate second = locks().build()) {
			Duration fixed = Duration.ofMillis(500);
			LockHandle late = first.withLeaseTime(fixed).acquire("job:3");
			long acquired = System.nanoTime();
			LockHandle next = second.withWaitTime(Duration.ofSeconds(5)).acquire("job:3");
			long gotItMillis = (System.nanoTime() - acquired) / 1_000_000;
			System.out.printf("fixed lease %d ms: next owner acquired after %d ms%n", fixed.toMillis(), gotItMillis);
			assertThat(gotItMillis).isBetween(fixed.toMillis() - 50, fixed.toMillis() + 300);
			assertThat(late.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(late::close)
				.withMessageContaining("job:3")
				.withMessageContaining("fixed lease");
			assertThat(next.isHeld()).isTrue();
			next.verifyHeld();
			assertThat(((String) this.redis.call("GET", "lockstep:job:3")).split(":")[1])
				.isEqualTo(Long.toString(next.fencingToken()));
			next.close();
			assertThat(this.redis.call("EXISTS", "lockstep:job:3")).isEqualTo(0L);
		}
	}

	@Test
	void renewalStopsWhenAHandleIsDroppedWithoutClose() throws Exception {
		try (RedisLockTemplate locks = locks().build()) {
			Thread thread = new Thread(() -> locks.acquire("job:4"));
			thread.start();
			thread.join(5_000);
			assertThat(thread.isAlive()).isFalse();
			assertThat(locks.isLocked("job:4")).isTrue();
			await("the lease of a handle nobody can close expires").atMost(LEASE.multipliedBy(6)).until(() -> {
				System.gc();
				return !locks.isLocked("job:4");
			});
			// the watchdog forgets it on its next pass, which a loaded machine may run
			// after the key expired
			await("the watchdog forgets the dropped handle").atMost(LEASE.multipliedBy(2))
				.until(() -> Probes.engine(locks).registered() == 0);
		}
	}

	@Test
	void renewalStopsAtRelease() {
		try (RedisLockTemplate locks = locks().build()) {
			LockHandle lock = locks.acquire("job:5");
			assertThat(Probes.engine(locks).registered()).isEqualTo(1);
			lock.close();
			assertThat(Probes.engine(locks).registered()).isZero();
			long before = TestLocks.commandCalls(this.redis, "evalsha");
			Eventually.holds(LEASE, () -> false);
			assertThat(TestLocks.commandCalls(this.redis, "evalsha")).as("no renewal after release").isEqualTo(before);
		}
	}

	@Test
	void maxHoldTimeCapsRenewal() {
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		Duration maxHold = Duration.ofMillis(1_500);
		try (RedisLockTemplate locks = locks().maxHoldTime(maxHold).lockLostListener(lost::add).build()) {
			AtomicReference<Long> ttlAtCap = new AtomicReference<>();
			// before the acquisition, whose server time starts the cap: its reply may
			// come late on a loaded machine
			long start = System.nanoTime();
			LockHandle lock = locks.acquire("job:6");
			await().atMost(maxHold.plus(LEASE).plusMillis(500)).until(() -> !locks.isLocked("job:6"));
			long goneMillis = (System.nanoTime() - start) / 1_000_000;
			ttlAtCap.set(goneMillis);
			System.out.printf("max-hold-time %d ms: key gone after %d ms%n", maxHold.toMillis(), goneMillis);
			assertThat(goneMillis).isBetween(maxHold.toMillis() - 100, maxHold.toMillis() + 500);
			await().atMost(Duration.ofSeconds(1)).until(() -> !lost.isEmpty());
			assertThat(lost.get(0).getReason()).contains("max-hold-time");
			assertThat(lock.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
		}
	}

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void aHandleStaysRenewedAfterTheThreadThatAcquiredItEnds(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.template(client, LEASE, COMMAND_TIMEOUT)) {
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
			assertThat(TestLocks.exists(redis, "lockstep:handed:over")).as("key after close() on the test thread")
				.isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aHandleDroppedWithoutCloseStopsBeingRenewedOnceCollected(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.template(client, LEASE, COMMAND_TIMEOUT)) {
			// acquired on this thread, which stays alive: only the dropped handle ends
			// the
			// renewal
			WeakReference<LockHandle> dropped = acquireAndDrop(locks, "dropped");
			long start = System.nanoTime();
			boolean collected = Eventually.holds(Duration.ofSeconds(10), () -> {
				System.gc();
				return dropped.get() == null;
			});
			long collectedMillis = (System.nanoTime() - start) / 1_000_000;
			assertThat(collected).as("the dropped handle was garbage-collected").isTrue();
			long collectedAt = System.nanoTime();
			boolean expired = Eventually.holds(LEASE.plusMillis(1_500),
					() -> !TestLocks.exists(redis, "lockstep:dropped"));
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
					Eventually.holds(Duration.ofSeconds(2),
							() -> closing.size() == rigs.size() && closing.stream().allMatch(WatchdogTests::parked));
					rigs.forEach(RaceRig::open);
					for (RaceRig rig : rigs) {
						rig.returned.await(2, TimeUnit.SECONDS);
					}
					Eventually.holds(Duration.ofSeconds(2), () -> rigs.stream().allMatch(RaceRig::listenerIdle));
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
			Eventually.holds(LEASE.dividedBy(3), () -> false);
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

	private static boolean parked(Thread thread) {
		Thread.State state = thread.getState();
		return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
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
			this.fixed.forEach(TestLocks::closeQuietly);
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
