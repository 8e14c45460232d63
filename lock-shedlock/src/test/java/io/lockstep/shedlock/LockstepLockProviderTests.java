package io.lockstep.shedlock;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.DistributedLocks;
import io.lockstep.LockException;
import io.lockstep.LockInfo;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The provider contract, written from ShedLock's behaviours (ShedLock publishes no test
 * kit), against a real Redis: two providers on two lock clients stand for two instances
 * of an application.
 */
@RedisTest
class LockstepLockProviderTests extends TwoInstances {

	LockstepLockProviderTests(RedisNode redis) {
		super(redis);
	}

	@Test
	void lockCreatesTheKeyAndUnlockDeletesIt() {
		Optional<SimpleLock> lock = this.provider.lock(config(this.name, Duration.ofSeconds(10), Duration.ZERO));
		assertThat(lock).isPresent();
		long ttl = pttl(this.name);
		assertThat(ttl).as("the key's TTL is lockAtMostFor").isBetween(9000L, 10000L);
		assertThat(this.other.lock(config(this.name))).as("another instance").isEmpty();
		lock.get().unlock();
		assertThat(pttl(this.name)).as("deleted at unlock").isEqualTo(-2);
		assertThat(this.other.lock(config(this.name))).as("free for another instance")
			.isPresent()
			.get()
			.satisfies(SimpleLock::unlock);
	}

	@Test
	void aSecondLockOfAHeldNameFailsEvenOnTheSameThread() throws Exception {
		SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
		assertThat(this.provider.lock(config(this.name))).as("same provider, same thread").isEmpty();
		assertThat(new LockstepLockProvider(this.locks).lock(config(this.name))).as("same lock client, same thread")
			.isEmpty();
		assertThat(this.other.lock(config(this.name))).as("another instance").isEmpty();
		Optional<SimpleLock> fromAnotherThread = OnAnotherThread.call(() -> this.provider.lock(config(this.name)));
		assertThat(fromAnotherThread).as("same provider, another thread").isEmpty();
		lock.unlock();
		assertThat(pttl(this.name)).as("the failed attempts left the key to the unlock").isEqualTo(-2);
	}

	@Test
	void twoNamesAreIndependent() {
		SimpleLock first = this.provider.lock(config(this.name + "-1")).orElseThrow();
		SimpleLock second = this.provider.lock(config(this.name + "-2")).orElseThrow();
		first.unlock();
		assertThat(pttl(this.name + "-2")).isPositive();
		second.unlock();
	}

	@Test
	void aNameCanBeLockedAgainRightAfterUnlock() {
		int rounds = 0;
		for (int i = 0; i < 10; i++) {
			SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
			assertThat(this.other.lock(config(this.name))).isEmpty();
			lock.unlock();
			rounds++;
		}
		assertThat(rounds).isEqualTo(10);
	}

	@Test
	void unlockingTwiceIsAnError() {
		SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
		lock.unlock();
		assertThatIllegalStateException().isThrownBy(lock::unlock).withMessageContaining(this.name);
	}

	@Test
	void lockAtMostForIsAFixedLeaseEvenShorterThanTheCommandTimeout() {
		// the lock clients' command timeout is 2 s: far above a third of this lease,
		// which
		// is fine as it is never renewed
		Duration atMost = Duration.ofMillis(50);
		long start = System.nanoTime();
		SimpleLock lock = this.provider.lock(config(this.name, atMost, Duration.ZERO)).orElseThrow();
		assertThat(this.other.lock(config(this.name, atMost, Duration.ZERO))).as("held for now").isEmpty();
		await("expired").atMost(Duration.ofSeconds(2)).until(() -> pttl(this.name) == -2);
		long expiredAfter = millisSince(start);
		Optional<SimpleLock> next = this.other.lock(config(this.name, atMost, Duration.ZERO));
		System.out.printf("lockAtMostFor 50ms: the key expired after %d ms; the other instance then locked: %s%n",
				expiredAfter, next.isPresent());
		assertThat(expiredAfter).isGreaterThanOrEqualTo(45);
		assertThat(next).as("another instance takes it after lockAtMostFor").isPresent();
		next.get().unlock();
		lock.unlock(); // its lease was lost: logged, not thrown
		assertThat(this.locks.leasesLost()).as("the job outran lockAtMostFor: a lost lease").isOne();
	}

	@Test
	void withInterruptOnLeaseLostAJobThatOutrunsLockAtMostForIsInterrupted() {
		try (RedisLockTemplate interrupting = RedisLockTemplate.builder(this.client)
			.interruptOnLeaseLost(true)
			.build()) {
			LockstepLockProvider provider = new LockstepLockProvider(interrupting);
			warmUp(provider);
			long start = System.nanoTime();
			SimpleLock lock = provider.lock(config(this.name, Duration.ofMillis(200), Duration.ZERO)).orElseThrow();
			boolean interrupted = false;
			try {
				// the job's work: blocks until interrupted, far longer than lockAtMostFor
				new CountDownLatch(1).await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
			long after = millisSince(start);
			lock.unlock();
			System.out.printf("lockAtMostFor 200ms, on-lease-lost=interrupt: the job was interrupted after %d ms%n",
					after);
			assertThat(interrupted).isTrue();
			assertThat(after).isBetween(150L, 5000L);
			assertThat(Thread.currentThread().isInterrupted()).as("no interrupt left behind").isFalse();
		}
	}

	@Test
	void lockAtLeastForKeepsTheKeyAfterAnEarlyUnlock() {
		Duration atLeast = Duration.ofMillis(600);
		long start = System.nanoTime();
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofSeconds(10), atLeast)).orElseThrow();
		lock.unlock();
		long ttl = pttl(this.name);
		assertThat(ttl).as("left to expire when lockAtLeastFor passes").isBetween(1L, 600L);
		assertThat(this.other.lock(config(this.name))).as("another instance, before lockAtLeastFor").isEmpty();
		assertThat(this.provider.lock(config(this.name))).as("the same instance too").isEmpty();
		await().atMost(Duration.ofSeconds(3)).until(() -> pttl(this.name) == -2);
		long freeAfter = millisSince(start);
		System.out.printf("lockAtLeastFor 600ms, unlocked at once: TTL %d ms at unlock, free after %d ms%n", ttl,
				freeAfter);
		assertThat(freeAfter).isGreaterThanOrEqualTo(590);
		this.other.lock(config(this.name)).orElseThrow().unlock();
		assertThat(this.locks.leasesLost()).isZero();
	}

	@Test
	void aJobThatOutlastsLockAtLeastForIsReleasedAtUnlock() {
		long start = System.nanoTime();
		SimpleLock lock = this.provider.lock(config(this.name, Duration.ofSeconds(10), Duration.ofMillis(100)))
			.orElseThrow();
		// the job runs longer than lockAtLeastFor
		await().atMost(Duration.ofSeconds(2)).until(() -> millisSince(start) > 150);
		lock.unlock();
		assertThat(pttl(this.name)).isEqualTo(-2);
	}

	@Test
	void maxHoldTimeCapsBothDurations() {
		try (RedisLockTemplate capped = RedisLockTemplate.builder(this.client)
			.maxHoldTime(Duration.ofSeconds(1))
			.build()) {
			LockstepLockProvider provider = new LockstepLockProvider(capped);
			SimpleLock lock = provider.lock(config(this.name, Duration.ofMinutes(10), Duration.ofMinutes(5)))
				.orElseThrow();
			assertThat(pttl(this.name)).as("lockAtMostFor capped by max-hold-time").isBetween(1L, 1000L);
			lock.unlock();
			assertThat(pttl(this.name)).as("lockAtLeastFor capped by max-hold-time").isBetween(1L, 1000L);
		}
	}

	@Test
	void leasesLockstepDoesNotAcceptAreRefusedNamingTheLock() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.provider.lock(config(this.name, Duration.ofMillis(10), Duration.ZERO)))
			.withMessageContaining("ShedLock lock '" + this.name + "'")
			.withMessageContaining("lockAtMostFor (PT0.01S)")
			.withMessageContaining("between 30ms and 1d");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.provider.lock(config(this.name, Duration.ofDays(2), Duration.ZERO)))
			.withMessageContaining("between 30ms and 1d");
		assertThat(pttl(this.name)).isEqualTo(-2);
	}

	@Test
	void locksLiveUnderTheShedLockNamespaceAndAreReportedUnderTheirName() {
		SimpleLock lock = this.provider.lock(config(this.name)).orElseThrow();
		List<LockInfo> held = this.locks.heldLocks();
		assertThat(held).singleElement().satisfies((info) -> {
			assertThat(info.key()).isEqualTo("lockstep:shedlock:" + this.name);
			assertThat(info.lockName()).isEqualTo(this.name);
			assertThat(info.renewed()).as("a fixed lease").isFalse();
			assertThat(info.fencingToken()).isPositive();
		});
		lock.unlock();
		assertThat(this.locks.heldLocks()).isEmpty();
	}

	@Test
	void jobsRunWithLockAssertAndTheirFencingTokenThroughShedLocksExecutor() throws Throwable {
		DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(this.provider);
		AtomicLong token = new AtomicLong();
		AtomicInteger runs = new AtomicInteger();
		for (int i = 0; i < 3; i++) {
			long previous = token.get();
			executor.executeWithLock((Runnable) () -> {
				LockAssert.assertLocked();
				token.set(DistributedLocks.currentFencingToken().orElseThrow());
				runs.incrementAndGet();
			}, config(this.name));
			assertThat(token.get()).as("fencing tokens increase run after run").isGreaterThan(previous);
		}
		assertThat(runs).hasValue(3);
		assertThatIllegalStateException().as("outside a job").isThrownBy(LockAssert::assertLocked);
		assertThat(DistributedLocks.currentFencingToken()).as("cleared after the job").isEmpty();
		assertThat(pttl(this.name)).isEqualTo(-2);
	}

	@Test
	void aNestedJobOfTheSameNameRunsUnderItsOuterLock() throws Throwable {
		DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(this.provider);
		AtomicInteger inner = new AtomicInteger();
		executor.executeWithLock((Runnable) () -> executor.executeWithLock((Runnable) () -> {
			LockAssert.assertLocked();
			inner.incrementAndGet();
		}, config(this.name)), config(this.name));
		assertThat(inner).as("ShedLock's executor does not ask the provider again").hasValue(1);
	}

	@Test
	void redisDownFailsTheLockWithinTheCommandTimeout() throws Exception {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		RedisClient down = RedisClient.create(RedisURI.create("127.0.0.1", port));
		try (RedisLockTemplate template = RedisLockTemplate.builder(down)
			.commandTimeout(Duration.ofMillis(500))
			.build()) {
			LockstepLockProvider provider = new LockstepLockProvider(template);
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> provider.lock(config(this.name)));
			long failedAfter = millisSince(start);
			System.out.printf("Redis down: lock failed after %d ms (command timeout 500 ms)%n", failedAfter);
			assertThat(failedAfter).isLessThan(5000);
		}
		finally {
			down.shutdown();
		}
	}

}
