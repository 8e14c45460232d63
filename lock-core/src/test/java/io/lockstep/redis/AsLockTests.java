package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockKeyException;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link io.lockstep.LockTemplate#asLock(String)}: a
 * {@code java.util.concurrent.locks.Lock} owned by the locking thread and reentrant for
 * it, with {@code Lock}'s waiting and interrupt rules, on a real Redis.
 */
@RedisTest
class AsLockTests {

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate locks;

	private ExecutorService pool;

	AsLockTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		// a short wait time: lock() must not be bound by it
		this.locks = TestLocks.builder(this.client)
			.waitTime(Duration.ofMillis(100))
			.commandTimeout(Duration.ofMillis(300))
			.build();
		TestLocks.warmUp(this.locks);
		this.pool = Executors.newCachedThreadPool();
	}

	@AfterEach
	void disconnect() {
		this.pool.shutdownNow();
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void theLockIsOwnedByTheLockingThreadAndReentrantForIt() throws Exception {
		Lock lock = this.locks.asLock("as-lock:owned");
		lock.lock();
		lock.lock();
		assertThat(lock.tryLock()).as("re-entry by the holder").isTrue();
		assertThat(elsewhere(lock::tryLock)).as("tryLock by another thread while held").isFalse();
		assertThat(elsewhere(() -> {
			lock.unlock();
			return true;
		})).as("unlock by another thread").isNull();
		lock.unlock();
		lock.unlock();
		assertThat(elsewhere(lock::tryLock)).as("tryLock by another thread while held once more").isFalse();
		lock.unlock();
		assertThat(this.locks.isLocked("as-lock:owned")).as("free after the last unlock").isFalse();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
			.withMessageContaining("as-lock:owned");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition);
		assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> this.locks.asLock(""));
	}

	@Test
	void twoClientsExcludeEachOtherThroughLockViews() throws Exception {
		try (RedisLockTemplate other = TestLocks.builder(this.client).build()) {
			TestLocks.warmUp(other);
			List<Lock> views = List.of(this.locks.asLock("as-lock:counter"), other.asLock("as-lock:counter"));
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			long[] counter = { 0 };
			int threads = 4;
			int rounds = 50;
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				Lock lock = views.get(t % 2);
				workers.add(this.pool.submit(() -> {
					start.await();
					for (int i = 0; i < rounds; i++) {
						lock.lock();
						try {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							long read = counter[0];
							Thread.yield();
							counter[0] = read + 1;
							inside.decrementAndGet();
						}
						finally {
							lock.unlock();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> worker : workers) {
				worker.get(2, TimeUnit.MINUTES);
			}
			System.out.printf("asLock: %d threads on 2 clients, %d lock()/unlock() each: %d overlaps, counter %d%n",
					threads, rounds, overlaps.get(), counter[0]);
			assertThat(overlaps.get()).isZero();
			assertThat(counter[0]).isEqualTo((long) threads * rounds);
		}
	}

	@Test
	void lockWaitsPastTheTemplatesWaitTimeAndIsNotEndedByAnInterrupt() throws Exception {
		Lock lock = this.locks.asLock("as-lock:wait");
		lock.lock();
		CountDownLatch started = new CountDownLatch(1);
		Thread[] waiter = new Thread[1];
		CompletableFuture<Boolean> acquired = CompletableFuture.supplyAsync(() -> {
			waiter[0] = Thread.currentThread();
			started.countDown();
			lock.lock();
			boolean interrupted = Thread.currentThread().isInterrupted();
			lock.unlock();
			return interrupted;
		}, this.pool);
		assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
		// three times the template's wait time, and an interrupt meanwhile
		assertThat(Eventually.holds(Duration.ofMillis(300), acquired::isDone)).isFalse();
		waiter[0].interrupt();
		assertThat(Eventually.holds(Duration.ofMillis(300), acquired::isDone)).as("ended by the interrupt").isFalse();
		long released = System.nanoTime();
		lock.unlock();
		assertThat(acquired.get(10, TimeUnit.SECONDS)).as("the interrupt is kept for the caller").isTrue();
		System.out.printf("asLock: lock() waited past the 100 ms wait time and an interrupt; got it %d ms after the "
				+ "release%n", (System.nanoTime() - released) / 1_000_000);
	}

	@Test
	void lockInterruptiblyEndsOnInterruptWithNothingHeld() throws Exception {
		Lock lock = this.locks.asLock("as-lock:interruptibly");
		lock.lock();
		CountDownLatch started = new CountDownLatch(1);
		Thread[] waiter = new Thread[1];
		CompletableFuture<String> outcome = CompletableFuture.supplyAsync(() -> {
			waiter[0] = Thread.currentThread();
			started.countDown();
			try {
				lock.lockInterruptibly();
				return "acquired";
			}
			catch (InterruptedException ex) {
				return "interrupted, flag " + Thread.currentThread().isInterrupted();
			}
		}, this.pool);
		assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(Eventually.holds(Duration.ofMillis(300), outcome::isDone)).isFalse();
		waiter[0].interrupt();
		assertThat(outcome.get(10, TimeUnit.SECONDS)).isEqualTo("interrupted, flag false");
		lock.unlock();
		assertThat(this.locks.isLocked("as-lock:interruptibly")).as("nothing held after the interrupt").isFalse();
		assertThat(elsewhere(lock::tryLock)).as("free for the next thread").isTrue();
	}

	@Test
	void tryLockWaitsUpToItsTime() throws Exception {
		Lock lock = this.locks.asLock("as-lock:try");
		lock.lock();
		long started = System.nanoTime();
		assertThat(elsewhere(() -> lock.tryLock(400, TimeUnit.MILLISECONDS))).isFalse();
		long waited = (System.nanoTime() - started) / 1_000_000;
		assertThat(waited).as("waited, ms").isGreaterThanOrEqualTo(400L);
		CompletableFuture<Boolean> later = CompletableFuture.supplyAsync(() -> {
			try {
				boolean got = lock.tryLock(10, TimeUnit.SECONDS);
				lock.unlock();
				return got;
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		}, this.pool);
		assertThat(Eventually.holds(Duration.ofMillis(200), later::isDone)).isFalse();
		lock.unlock();
		assertThat(later.get(10, TimeUnit.SECONDS)).as("acquired once released within its time").isTrue();
	}

	@Test
	void redisTroubleFailsLockFastWithALockException() throws Exception {
		Lock lock = this.locks.asLock("as-lock:down");
		this.redis.pause();
		long started = System.nanoTime();
		try {
			assertThatExceptionOfType(LockException.class).isThrownBy(lock::lock);
			assertThatExceptionOfType(LockException.class).isThrownBy(lock::tryLock);
		}
		finally {
			this.redis.resume();
		}
		long took = (System.nanoTime() - started) / 1_000_000;
		System.out.printf("asLock: lock() and tryLock() on a paused Redis failed after %d ms (command timeout 300)%n",
				took);
		assertThat(took).isLessThan(5_000L);
		assertThat(elsewhere(lock::tryLock)).as("nothing held by the failed calls").isTrue();
	}

	/** Runs the call on another thread: its result, or {@code null} if it threw. */
	private Boolean elsewhere(java.util.concurrent.Callable<Boolean> call) throws Exception {
		return this.pool.submit(() -> {
			try {
				return call.call();
			}
			catch (IllegalMonitorStateException ex) {
				return null;
			}
		}).get(30, TimeUnit.SECONDS);
	}

}
