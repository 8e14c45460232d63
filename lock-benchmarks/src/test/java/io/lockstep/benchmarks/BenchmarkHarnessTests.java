package io.lockstep.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The harness itself, fast: every contender locks and excludes against a real Redis, the
 * command count sees inside scripts, and the exclusion checks catch a lock that does not
 * lock. {@link BenchmarkSmokeTests} runs two scenarios briefly; the benchmarks proper run
 * through {@code run-benchmarks.sh}.
 */
@RedisTest
class BenchmarkHarnessTests {

	private final RedisTarget redis;

	BenchmarkHarnessTests(RedisNode node) {
		this.redis = new RedisTarget(node.host(), node.port());
	}

	@AfterEach
	void close() {
		this.redis.close();
	}

	@Test
	void everyContenderAcquiresReleasesAndExcludesASecondClient() throws Exception {
		ExecutorService waiter = Executors.newSingleThreadExecutor();
		try {
			for (Contenders which : Contenders.values()) {
				try (Contender first = which.create(this.redis); Contender second = which.create(this.redis)) {
					String key = "smoke:" + which.id();
					Contender.Held held = first.acquire(key);
					// thread-bound locks (Redisson, SI) are released by the thread that
					// took them
					Future<?> next = waiter.submit(() -> second.acquire(key).release());
					Thread.sleep(150);
					assertThat(next).as(which + " lets a second client in while the first holds the key").isNotDone();
					held.release();
					next.get(10, TimeUnit.SECONDS);
					// let the last release notification arrive before the clients shut
					// down
					Thread.sleep(100);
				}
			}
		}
		finally {
			waiter.shutdownNow();
		}
	}

	@Test
	void redisStatsCountCommandsRunInsideScriptsWithTheScriptsTimeAndTheServersCpu() {
		try (Contender floor = Contenders.FLOOR.create(this.redis)) {
			RedisTarget.Stats before = this.redis.stats();
			for (int i = 0; i < 10; i++) {
				floor.acquire("smoke:count").release();
			}
			RedisTarget.Stats after = this.redis.stats();
			assertThat(after.callsSince(before))
				.containsExactlyInAnyOrderEntriesOf(Map.of("evalsha", 20L, "set", 10L, "get", 10L, "del", 10L));
			// a script's time includes the commands it runs
			assertThat(after.microsSince(before, "evalsha")).isPositive()
				.isGreaterThanOrEqualTo(after.microsSince(before, "set"));
			assertThat(after.cpuSeconds()).isPositive().isGreaterThanOrEqualTo(before.cpuSeconds());
		}
	}

	@Test
	void exclusionCheckCatchesALockThatDoesNotLock() throws Exception {
		Contender broken = new Contender() {

			@Override
			public Held acquire(String key) {
				return () -> {
				};
			}

			@Override
			public void close() {
			}

		};
		Occupancy occupancy = new Occupancy(1);
		int threads = 4;
		CountDownLatch start = new CountDownLatch(1);
		List<CompletableFuture<Void>> runs = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			runs.add(CompletableFuture.runAsync(() -> {
				await(start);
				for (int round = 0; round < 20; round++) {
					CriticalSection.run(broken, "smoke:broken", occupancy, 0, Duration.ofMillis(2).toNanos(), () -> {
					});
				}
			}, Executors.newSingleThreadExecutor()));
		}
		start.countDown();
		assertThatThrownBy(
				() -> CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS))
			.isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(Occupancy.ExclusionViolation.class)
			.hasMessageContaining("Exclusion broken");
	}

	@Test
	void readWriteAndSemaphoreContendersShareTheKeyAndExcludeWhoMustWait() throws Exception {
		ExecutorService first = Executors.newSingleThreadExecutor();
		ExecutorService second = Executors.newSingleThreadExecutor();
		ExecutorService third = Executors.newSingleThreadExecutor();
		try {
			for (Contenders which : List.of(Contenders.LOCKSTEP, Contenders.REDISSON)) {
				try (Contender one = which.create(this.redis);
						Contender two = which.create(this.redis);
						Contender three = which.create(this.redis)) {
					// thread-bound locks (Redisson) are released by the thread that took
					// them: each holder acquires and releases on an executor of its own
					String rw = "smoke:rw:" + which.id();
					Contender.Held reader = first.submit(() -> one.acquireRead(rw)).get(10, TimeUnit.SECONDS);
					Contender.Held otherReader = within(second.submit(() -> two.acquireRead(rw)),
							which + " lets a second reader in while one holds the key");
					Future<Contender.Held> writer = third.submit(() -> three.acquireWrite(rw));
					Thread.sleep(150);
					assertThat(writer).as(which + " lets a writer in while two readers hold the key").isNotDone();
					first.submit(reader::release).get(10, TimeUnit.SECONDS);
					second.submit(otherReader::release).get(10, TimeUnit.SECONDS);
					Contender.Held written = within(writer, which + " lets the writer in once the readers left");
					Future<Contender.Held> readerAfterWriter = first.submit(() -> one.acquireRead(rw));
					Thread.sleep(150);
					assertThat(readerAfterWriter).as(which + " lets a reader in while a writer holds the key")
						.isNotDone();
					third.submit(written::release).get(10, TimeUnit.SECONDS);
					Contender.Held lastReader = within(readerAfterWriter,
							which + " lets the reader in once the writer left");
					first.submit(lastReader::release).get(10, TimeUnit.SECONDS);

					String sem = "smoke:sem:" + which.id();
					Contender.Held permit = first.submit(() -> one.acquirePermit(sem, 2)).get(10, TimeUnit.SECONDS);
					Contender.Held otherPermit = within(second.submit(() -> two.acquirePermit(sem, 2)),
							which + " lets a second holder into a semaphore of 2");
					Future<Contender.Held> thirdPermit = third.submit(() -> three.acquirePermit(sem, 2));
					Thread.sleep(150);
					assertThat(thirdPermit).as(which + " lets a third holder into a semaphore of 2").isNotDone();
					first.submit(permit::release).get(10, TimeUnit.SECONDS);
					Contender.Held last = within(thirdPermit,
							which + " lets the third holder in once a permit is free");
					third.submit(last::release).get(10, TimeUnit.SECONDS);
					second.submit(otherPermit::release).get(10, TimeUnit.SECONDS);
					// let the last release notification arrive before the clients shut
					// down
					Thread.sleep(100);
				}
			}
		}
		finally {
			first.shutdownNow();
			second.shutdownNow();
			third.shutdownNow();
		}
	}

	@Test
	void sharedOccupancyCatchesAnyoneInsideWithAWriterAndOneHolderTooMany() {
		SharedOccupancy readWrite = new SharedOccupancy();
		readWrite.enterRead();
		readWrite.enterRead();
		assertThat(readWrite.mostInside()).isEqualTo(2);
		assertThatThrownBy(readWrite::enterWrite).isInstanceOf(Occupancy.ExclusionViolation.class)
			.hasMessage("Read/write exclusion broken: a writer entered while 0 other writer(s) and 2 reader(s) were "
					+ "inside");
		readWrite.exitRead();
		readWrite.exitRead();
		readWrite.enterWrite();
		assertThatThrownBy(readWrite::enterRead).isInstanceOf(Occupancy.ExclusionViolation.class)
			.hasMessage("Read/write exclusion broken: a reader entered while a writer was inside");
		assertThatThrownBy(readWrite::enterWrite).isInstanceOf(Occupancy.ExclusionViolation.class)
			.hasMessageContaining("1 other writer(s) and 0 reader(s)");
		readWrite.exitWrite();
		readWrite.enterRead();

		SharedOccupancy semaphore = new SharedOccupancy();
		for (int i = 0; i < 3; i++) {
			semaphore.enterPermit(3);
		}
		assertThatThrownBy(() -> semaphore.enterPermit(3)).isInstanceOf(Occupancy.ExclusionViolation.class)
			.hasMessage("Semaphore broken: 4 holders inside at once, with 3 permits");
		semaphore.exitPermit();
		semaphore.enterPermit(3);
		assertThat(semaphore.mostInside()).isEqualTo(3);
	}

	@Test
	void readWriteAndSemaphoreScenariosRunOnlyTheContendersThatHaveThem() {
		for (Scenario scenario : List.of(Scenario.RW, Scenario.SEM)) {
			assertThat(Contenders.ids().stream().filter(scenario::runs)).containsExactly("lockstep", "redisson");
		}
		assertThat(Contenders.ids().stream().filter(Scenario.S3::runs)).containsExactlyElementsOf(Contenders.ids());
		assertThat(Contenders.defaults()).containsExactly("floor", "parked", "lockstep", "redisson", "si-spin",
				"si-pubsub");
		try (Contender floor = Contenders.FLOOR.create(this.redis)) {
			assertThatThrownBy(() -> floor.acquireRead("smoke:n/a")).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("FloorContender has no read/write locks");
		}
	}

	/** The future's value, or a failure saying what did not happen within 10 s. */
	private static <T> T within(Future<T> future, String expected) throws Exception {
		try {
			return future.get(10, TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			throw new AssertionError("Not done within 10 s: " + expected, ex);
		}
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
