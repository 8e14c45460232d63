package io.lockstep.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.ShortKeepAlive;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@code SimpleLock.extend(lockAtMostFor, lockAtLeastFor)}, the provider being ShedLock's
 * {@code ExtensibleLockProvider}, and ShedLock's {@code KeepAliveLockProvider} over it,
 * against a real Redis; a second lock client stands for another instance.
 */
@RedisTest
class LockstepLockProviderExtendTests extends TwoInstances {

	LockstepLockProviderExtendTests(RedisNode redis) {
		super(redis);
	}

	@Test
	void extendGivesTheLockANewFixedLeaseFromNow() {
		long start = System.nanoTime();
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(5), Duration.ZERO).orElseThrow();
		assertThat(pttl()).as("the lease is lockAtMostFor from now").isBetween(4000L, 5000L);
		await().atMost(Duration.ofSeconds(2)).until(() -> millisSince(start) > 400);
		assertThat(this.other.lock(config(this.name))).as("held past the first lease").isEmpty();
		extended.unlock();
		assertThat(pttl()).as("unlock after extend deletes the key").isEqualTo(-2);
		assertThat(this.locks.leasesLost()).isZero();
	}

	@Test
	void afterExtendOnlyTheNewLockIsValid() {
		SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
		assertThatIllegalStateException().isThrownBy(lock::unlock);
		assertThatIllegalStateException().isThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO));
		assertThat(pttl()).as("the old lock's unlock did nothing").isPositive();
		SimpleLock again = extended.extend(Duration.ofSeconds(20), Duration.ZERO).orElseThrow();
		assertThat(pttl()).isBetween(19_000L, 20_000L);
		again.unlock();
		assertThat(pttl()).isEqualTo(-2);
	}

	@Test
	void anExpiredLockCannotBeExtended() {
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
		await().atMost(Duration.ofSeconds(2)).until(() -> pttl() == -2);
		assertThat(lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
		assertThat(pttl()).as("extend never recreates the key").isEqualTo(-2);
		assertThatIllegalStateException().as("ShedLock: a lock is spent by extend").isThrownBy(lock::unlock);
	}

	@Test
	void aLockTakenByAnotherInstanceAfterExpiryCannotBeExtended() {
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
		await().atMost(Duration.ofSeconds(2))
			.until(() -> this.other.lock(config(this.name)).map((taken) -> true).orElse(false));
		long othersTtl = pttl();
		assertThat(lock.extend(Duration.ofMinutes(10), Duration.ZERO)).isEmpty();
		assertThat(pttl()).as("the other owner's key is untouched").isBetween(1L, othersTtl);
	}

	@Test
	void anUnlockedLockCannotBeExtended() {
		SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
		lock.unlock();
		assertThatIllegalStateException().isThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO));
		assertThat(pttl()).isEqualTo(-2);
	}

	@Test
	void extendCarriesItsOwnLockAtLeastFor() {
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
		long start = System.nanoTime();
		SimpleLock extended = lock.extend(Duration.ofSeconds(10), Duration.ofMillis(600)).orElseThrow();
		extended.unlock();
		long ttl = pttl();
		assertThat(ttl).as("kept for the extension's lockAtLeastFor").isBetween(1L, 600L);
		assertThat(this.other.lock(config(this.name))).isEmpty();
		await().atMost(Duration.ofSeconds(3)).until(() -> pttl() == -2);
		System.out.printf("extend(10s, 600ms) then unlock: TTL %d ms, free after %d ms%n", ttl, millisSince(start));
		assertThat(millisSince(start)).isGreaterThanOrEqualTo(590);
	}

	@Test
	void extendPastMaxHoldTimeIsCappedThereAndAnswersWhetherTheLockIsHeld() {
		try (RedisLockTemplate capped = RedisLockTemplate.builder(this.client)
			.maxHoldTime(Duration.ofSeconds(1))
			.build()) {
			LockstepLockProvider provider = new LockstepLockProvider(capped);
			long start = System.nanoTime();
			SimpleLock lock = provider.lock(config(this.name, Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
			Optional<SimpleLock> extended = lock.extend(Duration.ofMinutes(10), Duration.ofMinutes(5));
			assertThat(extended).as("still held, up to the cap").isPresent();
			assertThat(pttl()).as("capped at max-hold-time").isBetween(1L, 1000L);
			await().atMost(Duration.ofSeconds(3)).until(() -> pttl() == -2);
			long goneAfter = millisSince(start);
			System.out.printf("max-hold-time 1s, extended by 10 min: the key expired after %d ms%n", goneAfter);
			assertThat(goneAfter).isBetween(900L, 2000L);
			assertThat(extended.get().extend(Duration.ofMinutes(10), Duration.ZERO)).as("no longer held").isEmpty();
		}
	}

	@Test
	void aJobExtendsItsLockWithLockExtender() throws Throwable {
		DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(this.provider);
		AtomicLong ttl = new AtomicLong();
		executor.executeWithLock((Runnable) () -> {
			LockExtender.extendActiveLock(Duration.ofSeconds(30), Duration.ZERO);
			ttl.set(pttl());
		}, config(this.name, Duration.ofSeconds(1), Duration.ZERO));
		assertThat(ttl.get()).as("extended inside the job").isBetween(29_000L, 30_000L);
		assertThat(pttl()).as("released by the executor after the job").isEqualTo(-2);
	}

	@Test
	void redisDownFailsAnExtensionAndTheLockStaysUsable(RedisFixture fixture) {
		RedisNode node = fixture.standalone();
		RedisClient client = client(node.port());
		try (RedisLockTemplate template = RedisLockTemplate.builder(client)
			.commandTimeout(Duration.ofMillis(300))
			.build()) {
			LockstepLockProvider provider = new LockstepLockProvider(template);
			SimpleLock lock = provider.lock(config(this.name, Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
			node.pause();
			long start = System.nanoTime();
			try {
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> lock.extend(Duration.ofSeconds(30), Duration.ZERO));
			}
			finally {
				node.resume();
			}
			System.out.printf("Redis stopped: extend failed after %d ms (command timeout 300 ms)%n",
					millisSince(start));
			lock.unlock();
			assertThat((Long) node.call("EXISTS", "lockstep:shedlock:" + this.name)).as("the lock still unlocks")
				.isZero();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void keepAliveLockProviderKeepsALongJobLocked() throws Exception {
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
		try {
			LockProvider keepAlive = ShortKeepAlive.of(this.provider, executor, Duration.ofMillis(100));
			// lockAtMostFor 1 s: KeepAliveLockProvider extends it every 500 ms, a margin
			// for a loaded machine
			SimpleLock lock = keepAlive.lock(config(this.name, Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
			AtomicInteger checks = new AtomicInteger();
			AtomicInteger refused = new AtomicInteger();
			// the job runs 3 s, three times its lockAtMostFor; the other instance tries
			// every 50 ms meanwhile
			await().during(Duration.ofSeconds(3))
				.atMost(Duration.ofSeconds(10))
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(50))
				.until(() -> {
					if (this.other.lock(config(this.name)).isEmpty()) {
						refused.incrementAndGet();
					}
					checks.incrementAndGet();
					return true;
				});
			lock.unlock();
			System.out.printf(
					"KeepAliveLockProvider, lockAtMostFor 1s, job of 3s: %d of %d attempts of another "
							+ "instance refused, leases lost %d%n",
					refused.get(), checks.get(), this.locks.leasesLost());
			assertThat(refused.get()).isEqualTo(checks.get()).isPositive();
			assertThat(this.locks.leasesLost()).isZero();
			assertThat(pttl()).isEqualTo(-2);
		}
		finally {
			executor.shutdownNow();
		}
	}

}
