package io.lockstep.redis;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The lock-lost listener: an error it throws does not stop renewals, and it may use the
 * lock API.
 */
@RedisTest
class LockLostListenerTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

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
			await("the listener ran for the deleted key").atMost(Duration.ofSeconds(3)).until(() -> thrown.get() >= 1);
			// a fixed lease running out while held is reported too (the watchdog's own
			// detection, not a renewal reply)
			LockHandle fixed = locks.withLeaseTime(Duration.ofMillis(200)).acquire("errors:fixed");
			Eventually.holds(Duration.ofSeconds(2), () -> thrown.get() >= 2);
			Presence presence = Presence.watch(redis, "lockstep:errors:kept", LEASE.multipliedBy(4));
			System.out.printf("listener threw %d Error(s); key of a held lock present at %s over 4 leases%n",
					thrown.get(), presence);
			assertThat(presence.present())
				.as("checks finding the key of a held lock after %d listener Error(s) (%s)", thrown.get(), presence)
				.isEqualTo(presence.checks());
			assertThat(kept.isHeld()).isTrue();
			kept.close();
			TestLocks.closeQuietly(deleted);
			TestLocks.closeQuietly(fixed);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aLockLostListenerMayUseTheLockApi(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		AtomicReference<RedisLockTemplate> template = new AtomicReference<>();
		AtomicReference<String> outcome = new AtomicReference<>();
		AtomicReference<String> thread = new AtomicReference<>();
		CountDownLatch done = new CountDownLatch(1);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(COMMAND_TIMEOUT)
			.lockLostListener((event) -> {
				thread.set(Thread.currentThread().getName());
				long start = System.nanoTime();
				try {
					Optional<LockHandle> other = template.get().tryAcquire("listener:other");
					other.ifPresent(LockHandle::close);
					outcome.set(other.isPresent() ? "acquired" : "held elsewhere");
				}
				catch (RuntimeException ex) {
					outcome.set(ex.toString());
				}
				finally {
					System.out.printf("listener on thread '%s': tryAcquire took %d ms: %s%n", thread.get(),
							(System.nanoTime() - start) / 1_000_000, outcome.get());
					done.countDown();
				}
			})
			.build()) {
			template.set(locks);
			LockHandle lock = locks.acquire("listener:lost");
			redis.call("DEL", "lockstep:listener:lost");
			assertThat(done.await(5, TimeUnit.SECONDS)).as("the listener completed within 5 s").isTrue();
			assertThat(outcome.get()).as("tryAcquire() and close() inside onLockLost").isEqualTo("acquired");
			assertThat(thread.get()).as("listener thread").doesNotStartWith("lettuce");
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close);
		}
		finally {
			client.shutdown();
		}
	}

}
