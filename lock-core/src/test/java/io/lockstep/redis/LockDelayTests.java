package io.lockstep.redis;

import java.time.Duration;
import java.util.Optional;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Lock delay ({@code lockstep.lock-delay}): a lease that ends without a release (the
 * holder's JVM killed, or frozen by SIGSTOP) leaves the key unavailable for the delay
 * after it, counted in Redis from the lease's end; the next holder gets in no earlier
 * than that and about one hand-off after; a release frees the key at once; a lost
 * reader's share holds writers up for the delay, not other readers.
 */
@RedisTest
class LockDelayTests {

	private static final long LEASE_MILLIS = 1_000;

	private static final long DELAY_MILLIS = 2_000;

	/** Redis counts PTTL in whole ms, the client's clock in ns: a little apart. */
	private static final long CLOCKS_MILLIS = 100;

	/**
	 * Past the key's expiry: the waiter's re-check and its attempt on a loaded machine.
	 */
	private static final long HAND_OFF_MILLIS = 1_500;

	private final RedisNode redis;

	private RedisClient client;

	LockDelayTests(RedisNode redis) {
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
	void aKilledHoldersKeyStaysUnavailableForTheDelayAfterItsLease() {
		Next next = afterTheHolder("delay:killed", DELAY_MILLIS, false);
		System.out.printf("holder JVM SIGKILLed (lease %d ms, lock delay %d ms): the key lived %d ms more; the "
				+ "next holder got in after %d ms%n", LEASE_MILLIS, DELAY_MILLIS, next.pttl, next.waitedMillis);
		assertThat(next.pttl).as("the key lives past the lease by the delay").isGreaterThan(DELAY_MILLIS);
		assertThat(next.waitedMillis).isBetween(next.pttl - CLOCKS_MILLIS, next.pttl + HAND_OFF_MILLIS);
	}

	@Test
	void withoutADelayTheKilledHoldersKeyIsFreeAfterItsLease() {
		Next next = afterTheHolder("delay:none", 0, false);
		System.out.printf("holder JVM SIGKILLed (lease %d ms, no lock delay): the next holder got in after %d ms%n",
				LEASE_MILLIS, next.waitedMillis);
		assertThat(next.pttl).isLessThanOrEqualTo(LEASE_MILLIS);
		assertThat(next.waitedMillis).isLessThan(LEASE_MILLIS + HAND_OFF_MILLIS);
	}

	@Test
	void aFrozenHoldersKeyStaysUnavailableForTheDelayAfterItsLease() {
		Next next = afterTheHolder("delay:frozen", DELAY_MILLIS, true);
		System.out.printf("holder JVM SIGSTOPped (lease %d ms, lock delay %d ms): the key lived %d ms more; the "
				+ "next holder got in after %d ms%n", LEASE_MILLIS, DELAY_MILLIS, next.pttl, next.waitedMillis);
		assertThat(next.pttl).isGreaterThan(DELAY_MILLIS);
		assertThat(next.waitedMillis).isBetween(next.pttl - CLOCKS_MILLIS, next.pttl + HAND_OFF_MILLIS);
	}

	@Test
	void aReleaseFreesTheKeyAtOnceWhateverTheDelay() throws Exception {
		try (RedisLockTemplate holder = TestLocks.builder(this.client).lockDelay(Duration.ofSeconds(10)).build();
				RedisLockTemplate waiter = TestLocks.builder(TestLocks.client(this.redis))
					.waitTime(Duration.ofSeconds(20))
					.build()) {
			LockHandle held = holder.acquire("delay:released");
			java.util.concurrent.CompletableFuture<Long> next = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> {
					try (LockHandle lock = waiter.acquire("delay:released")) {
						return System.nanoTime();
					}
				});
			await().atMost(Duration.ofSeconds(5))
				.until(() -> io.lockstep.internal.engine.Probes.engine(waiter).keysWaitedFor() == 1);
			long released = System.nanoTime();
			held.close();
			long afterMillis = (next.get(20, java.util.concurrent.TimeUnit.SECONDS) - released) / 1_000_000;
			System.out.printf("lock delay 10 s: a release handed the key to the waiter after %d ms%n", afterMillis);
			assertThat(afterMillis).isLessThan(1_000);
		}
	}

	@Test
	void aLostReadersShareHoldsWritersUpForTheDelayButNotOtherReaders() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client)
			.lockDelay(Duration.ofMillis(DELAY_MILLIS))
			.build(); RedisLockTemplate others = TestLocks.builder(TestLocks.client(this.redis)).build()) {
			LockHandle lost = locks.read().withLeaseTime(Duration.ofMillis(300)).acquire("delay:doc");
			long acquired = System.nanoTime();
			await().atMost(Duration.ofSeconds(5)).until(() -> !lost.isHeld());
			Optional<LockHandle> reader = others.read().tryAcquire("delay:doc");
			assertThat(reader).as("another reader joins while the lost share is in its delay").isPresent();
			reader.get().close();
			assertThat(others.tryAcquire("delay:doc")).as("a writer, while the lost share is in its delay").isEmpty();
			try (LockHandle writer = others.withWaitTime(Duration.ofSeconds(10)).acquire("delay:doc")) {
				long afterMillis = (System.nanoTime() - acquired) / 1_000_000;
				System.out.printf("a reader's fixed 300 ms lease lost, lock delay %d ms: a writer got in %d ms after "
						+ "the reader's grant%n", DELAY_MILLIS, afterMillis);
				assertThat(afterMillis).isBetween(300 + DELAY_MILLIS - CLOCKS_MILLIS,
						300 + DELAY_MILLIS + HAND_OFF_MILLIS);
			}
			lost.close();
		}
		catch (io.lockstep.LockLostException expected) {
			// closing the lost share reports its loss
		}
	}

	/**
	 * A holder JVM takes the key with a watchdog lease and the delay; {@code end} ends it
	 * without a release; then this JVM waits for the key.
	 */
	private Next afterTheHolder(String key, long delayMillis, boolean frozen) {
		try (WorkerJvm holder = TestLocks.worker("hold", Integer.toString(this.redis.port()), key,
				Long.toString(LEASE_MILLIS), Long.toString(delayMillis));
				RedisLockTemplate locks = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(15)).build()) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			try {
				if (frozen) {
					holder.pause();
				}
				else {
					holder.kill();
				}
				long pttl = (Long) this.redis.call("PTTL", "lockstep:" + key);
				long from = System.nanoTime();
				try (LockHandle lock = locks.acquire(key)) {
					return new Next(pttl, (System.nanoTime() - from) / 1_000_000);
				}
			}
			finally {
				if (frozen) {
					holder.resume(); // it wakes up to a lease it lost, then is stopped
				}
			}
		}
	}

	private record Next(long pttl, long waitedMillis) {
	}

}
