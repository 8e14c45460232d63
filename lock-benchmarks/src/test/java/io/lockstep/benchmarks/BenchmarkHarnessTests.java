package io.lockstep.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
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
 * command count sees inside scripts, the exclusion check catches a lock that does not
 * lock, and the report renders. The benchmarks proper run only through
 * {@code run-benchmarks.sh}.
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
	void commandCountIncludesCommandsRunInsideScripts() {
		try (Contender floor = Contenders.FLOOR.create(this.redis)) {
			Map<String, Long> before = this.redis.commandCalls();
			floor.acquire("smoke:count").release();
			TrialRecord record = new TrialRecord("test", "floor", "shared");
			record.add(before, this.redis.commandCalls(), 1, 1, 1_000_000);
			assertThat(record.commands).containsEntry("evalsha", 2L)
				.containsEntry("set", 1L)
				.containsEntry("get", 1L)
				.containsEntry("del", 1L);
			assertThat(record.commandsPerAcquisition()).isEqualTo(5.0);
		}
	}

	@Test
	void redisTimeOfEachScriptIsReadAndShownPerCallInTheDetails() {
		try (Contender floor = Contenders.FLOOR.create(this.redis)) {
			RedisTarget.CommandStats before = this.redis.commandStats();
			for (int i = 0; i < 10; i++) {
				floor.acquire("smoke:time").release();
			}
			TrialRecord record = new TrialRecord("test", "floor", "shared");
			record.add(before, this.redis.commandStats(), 10, 10, 1_000_000);
			assertThat(record.commands).containsEntry("evalsha", 20L);
			assertThat(record.micros).containsKey("evalsha");
			// a script's time includes the commands it runs
			assertThat(record.micros.get("evalsha")).isGreaterThanOrEqualTo(record.micros.get("set"));
			assertThat(record.microsPerCall("evalsha")).isPositive().isEqualTo(record.micros.get("evalsha") / 20.0);
			assertThat(record.microsPerCall("missing")).isNaN();
		}
		TrialRecord record = new TrialRecord(Scenario.S1.benchmark().getSimpleName(), "floor", "shared");
		record.add(new RedisTarget.CommandStats(Map.of(), Map.of()),
				new RedisTarget.CommandStats(Map.of("evalsha", 20L, "set", 10L), Map.of("evalsha", 437L, "set", 9L)),
				10, 10, 1_000_000_000);
		Map<String, Outcome> outcomes = Map.of(Outcome.key(Scenario.S1, "floor", "shared"),
				new Outcome(Scenario.S1, "floor", "shared", 100, "us/op", 100, 100, 50, 100, record));
		RunInfo run = new RunInfo(List.of(Scenario.S1), List.of("floor"), List.of("shared"), "1 × 1 s", "2 × 1 s",
				"7.0.15", new MachineProbe(50, 200, 300, 100, 600), "today", "0 min 1 s", "1.0", "1.0",
				"run-benchmarks.sh", List.of());
		assertThat(new Report(outcomes, run).render()).contains("evalsha 2.00 (21.9 µs each) · set 1.00 |");
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
	void reportShowsRatiosToTheFloorAndTheTargets() {
		Map<String, Outcome> outcomes = new LinkedHashMap<>();
		outcomes.put(Outcome.key(Scenario.S1, "floor", "shared"), outcome(Scenario.S1, "floor", 100, 50, 5));
		outcomes.put(Outcome.key(Scenario.S1, "lockstep", "shared"), outcome(Scenario.S1, "lockstep", 120, 60, 6));
		RunInfo run = new RunInfo(List.of(Scenario.S1), List.of("floor", "lockstep"), List.of("shared"), "1 × 1 s",
				"2 × 1 s", "7.0.15", new MachineProbe(50, 200, 300, 100, 600), "today", "0 min 1 s", "1.0", "1.0",
				"run-benchmarks.sh", List.of());
		String markdown = new Report(outcomes, run).render();
		assertThat(markdown).contains("| S1 uncontended pair, p50 | 50.0 µs (1.00×) | 60.0 µs (1.20×) |")
			.contains("| S1 p50 ≤ 1.05× floor | 1.20× floor | **missed** |")
			.contains("| ≤ 6 Redis commands per uncontended pair | 6.00 | met |")
			.contains("- Redis round trip (raw Lettuce EVALSHA, p50 of 600): 50.0 µs right after another, 200 µs "
					+ "after a 5 ms idle wait; a notification after a 5 ms idle wait")
			.doesNotContain("S2 8 threads");
		assertThat(EnumSet.allOf(Scenario.class)).hasSize(7);
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
		try (Contender floor = Contenders.FLOOR.create(this.redis)) {
			assertThatThrownBy(() -> floor.acquireRead("smoke:n/a")).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("FloorContender has no read/write locks");
		}
	}

	@Test
	void reportShowsReadWriteAndSemaphoreRatiosToRedissonAndMarksTheOthersNotApplicable() {
		Map<String, Outcome> outcomes = new LinkedHashMap<>();
		outcomes.put(Outcome.key(Scenario.RW, "lockstep", "shared"), shared(Scenario.RW, "lockstep", 3000, 8, 300));
		outcomes.put(Outcome.key(Scenario.RW, "redisson", "shared"), shared(Scenario.RW, "redisson", 1500, 6, 150));
		outcomes.put(Outcome.key(Scenario.SEM, "lockstep", "shared"), shared(Scenario.SEM, "lockstep", 2000, 3, 0));
		outcomes.put(Outcome.key(Scenario.SEM, "redisson", "shared"), shared(Scenario.SEM, "redisson", 1600, 3, 0));
		RunInfo run = new RunInfo(List.of(Scenario.RW, Scenario.SEM), List.of("floor", "lockstep", "redisson"),
				List.of("shared"), "1 × 1 s", "2 × 1 s", "7.0.15", null, "today", "0 min 1 s", "1.0", "1.0",
				"run-benchmarks.sh", List.of());
		String markdown = new Report(outcomes, run).render();
		assertThat(markdown)
			.contains("| RW 8 threads, 1 key, 90 % reads, 1 ms inside: operations/s | n/a | 3,000/s | 1,500/s |")
			.contains("| RW operations/s ≥ 1.5× Redisson's `RReadWriteLock` | 2.00× Redisson | met |")
			.contains("| SEM acquisitions/s ≥ 1.5× Redisson's semaphore | 1.25× Redisson | **missed** |")
			.contains("| busy-spin floor (raw Lettuce EVALSHA ×2) | shared | not applicable |")
			.contains("| 8 (writes 10 %) |")
			.contains("| Redisson `RPermitExpirableSemaphore` (30 s lease per permit) | shared | 1,600/s |")
			.contains("`RPermitExpirableSemaphore`")
			.doesNotContain("| failed |");
	}

	private static Outcome shared(Scenario scenario, String contender, long operations, long mostInside, long writes) {
		TrialRecord record = new TrialRecord(scenario.benchmark().getSimpleName(), contender, "shared");
		record.add(Map.of(), Map.of("evalsha", 2 * operations), operations, operations, 1_000_000_000);
		record.mostInside = mostInside;
		record.writes = writes;
		return new Outcome(scenario, contender, "shared", operations, "ops/s", operations, operations, Double.NaN,
				Double.NaN, record);
	}

	private static Outcome outcome(Scenario scenario, String contender, double score, double p50, long commands) {
		TrialRecord record = new TrialRecord(scenario.benchmark().getSimpleName(), contender, "shared");
		record.add(Map.of(), Map.of("evalsha", commands), 1, 1, 1_000_000_000);
		return new Outcome(scenario, contender, "shared", score, "us/op", score, score, p50, p50 * 2, record);
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
