package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Lease loss is detected, signalled, counted and surfaced at release.
 */
@RedisTest
class LeaseLossTests {

	private static final Duration LEASE = Duration.ofMillis(900);

	@Test
	void detectsAKeyDeletedFromOutsideWithinAThirdOfTheLeasePlusOneSecond(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		CountDownLatch signalled = new CountDownLatch(1);
		AtomicReference<LockLostEvent> event = new AtomicReference<>();
		AtomicLong signalledAt = new AtomicLong();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(200))
			.lockLostListener((lost) -> {
				signalledAt.set(System.nanoTime());
				event.set(lost);
				signalled.countDown();
			})
			.build()) {
			LockHandle lock = locks.named("orders").acquire("42");
			long deleted = System.nanoTime();
			assertThat(redis.call("DEL", "lockstep:orders:42")).isEqualTo(1L);
			long bound = LEASE.toMillis() / 3 + 1_000;
			assertThat(signalled.await(bound, TimeUnit.MILLISECONDS)).as("signal within %d ms", bound).isTrue();
			long detectedMillis = (signalledAt.get() - deleted) / 1_000_000;
			System.out.printf("key deleted from outside: loss signalled after %d ms (bound %d ms)%n", detectedMillis,
					bound);
			assertThat(event.get().getKey()).isEqualTo("lockstep:orders:42");
			assertThat(event.get().getLockName()).isEqualTo("orders");
			assertThat(event.get().getFencingToken()).isEqualTo(lock.fencingToken());
			assertThat(event.get().getReason()).contains("gone or held by another owner");
			assertThat(lock.isHeld()).isFalse();
			assertThat(locks.leasesLost()).isEqualTo(1);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close)
				.withMessageContaining("lockstep:orders:42");
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void detectsRedisPausedPastTheLeaseWhileItIsStillPaused(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		CountDownLatch signalled = new CountDownLatch(1);
		AtomicBoolean pausedAtSignal = new AtomicBoolean();
		AtomicLong signalledAt = new AtomicLong();
		AtomicBoolean paused = new AtomicBoolean();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(200))
			.lockLostListener((lost) -> {
				signalledAt.set(System.nanoTime());
				pausedAtSignal.set(paused.get());
				signalled.countDown();
			})
			.build()) {
			LockHandle lock = locks.acquire("report");
			redis.pause();
			paused.set(true);
			long pausedAt = System.nanoTime();
			try {
				assertThat(signalled.await(LEASE.toMillis() + 1_000, TimeUnit.MILLISECONDS)).isTrue();
				assertThat(lock.isHeld()).isFalse();
			}
			finally {
				paused.set(false);
				redis.resume();
			}
			long detectedMillis = (signalledAt.get() - pausedAt) / 1_000_000;
			System.out.printf("redis SIGSTOPped: loss signalled after %d ms while still stopped (lease %d ms)%n",
					detectedMillis, LEASE.toMillis());
			assertThat(pausedAtSignal.get()).as("signalled while Redis was still stopped").isTrue();
			assertThat(detectedMillis).isLessThanOrEqualTo(LEASE.toMillis() + 400);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close)
				.withMessageContaining("unreachable");
			// the token-checked release at close removed our key: another owner can take
			// it
			assertThat(locks.tryAcquire("report")).isPresent().get().satisfies(LockHandle::close);
		}
		finally {
			client.shutdown();
		}
	}

	private static final Duration SHORT_LEASE = Duration.ofMillis(600);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void interruptOnLeaseLostEndsTheCallWithLockLostExceptionAndClearsTheInterrupt(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		AtomicBoolean interrupted = new AtomicBoolean();
		AtomicLong waitedMillis = new AtomicLong();
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(SHORT_LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.interruptOnLeaseLost(true)
			.build()) {
			Throwable thrown;
			boolean leftInterrupted;
			try {
				thrown = catchThrowable(() -> locks.execute("interrupted", (lock) -> {
					redis.call("DEL", "lockstep:interrupted");
					long start = System.nanoTime();
					try {
						new CountDownLatch(1).await(10, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						interrupted.set(true);
						// well-behaved work restores the flag
						Thread.currentThread().interrupt();
					}
					waitedMillis.set((System.nanoTime() - start) / 1_000_000);
					return "done";
				}));
			}
			finally {
				leftInterrupted = Thread.interrupted();
			}
			System.out.printf(
					"key deleted during the call: interrupted %s after %d ms; execute() threw %s; "
							+ "interrupt flag after: %s%n",
					interrupted.get(), waitedMillis.get(), thrown, leftInterrupted);
			assertThat(interrupted.get()).as("the lost lease interrupted the work").isTrue();
			assertThat(thrown).as("what execute() threw").isInstanceOf(LockLostException.class);
			assertThat(leftInterrupted).as("interrupt flag after execute() returned").isFalse();
		}
		finally {
			Thread.interrupted();
			client.shutdown();
		}
	}

}
