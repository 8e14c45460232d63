package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.engine.Probes;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

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
				TestLocks.eventually(Duration.ofMillis(50), () -> false);
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
				TestLocks.eventually(Duration.ofMillis(100), () -> false);
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
			assertThat(TestLocks.eventually(LEASE.multipliedBy(6), () -> {
				System.gc();
				return !locks.isLocked("job:4");
			})).as("the lease of a handle nobody can close expires").isTrue();
			// the watchdog forgets it on its next pass, which a loaded machine may run
			// after the key expired
			assertThat(TestLocks.eventually(LEASE.multipliedBy(2), () -> Probes.engine(locks).registered() == 0))
				.as("the watchdog forgets the dropped handle")
				.isTrue();
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
			TestLocks.eventually(LEASE, () -> false);
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
			assertThat(TestLocks.eventually(maxHold.plus(LEASE).plusMillis(500), () -> !locks.isLocked("job:6")))
				.isTrue();
			long goneMillis = (System.nanoTime() - start) / 1_000_000;
			ttlAtCap.set(goneMillis);
			System.out.printf("max-hold-time %d ms: key gone after %d ms%n", maxHold.toMillis(), goneMillis);
			assertThat(goneMillis).isBetween(maxHold.toMillis() - 100, maxHold.toMillis() + 500);
			assertThat(TestLocks.eventually(Duration.ofSeconds(1), () -> !lost.isEmpty())).isTrue();
			assertThat(lost.get(0).getReason()).contains("max-hold-time");
			assertThat(lock.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
		}
	}

}
