package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLock;
import io.lockstep.DistributedLocks;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Regression tests for defects of {@link DistributedLock} and its auto-configuration,
 * against a real Redis: a lock handed to a future must not stay on the thread that handed
 * it over, interrupt mode must end the call with {@link LockLostException} and leave no
 * interrupt behind, a constant key without quotes must fail the start, the disabled
 * starter must still give a working (local) {@link LockTemplate}, and a release that
 * cannot reach Redis must not fail a call that returned.
 */
@RedisTest
class AnnotationDefectTests {

	private static final String PREFIX = "defects:";

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withPropertyValues("lockstep.key-prefix=" + PREFIX);

	private RedisNode redis;

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redis = redis;
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	// 2: a lock re-entered by an asynchronous method must not stay on the pool thread

	@Test
	void asyncReentryOnAPoolThreadLeavesNoLockOnThatThreadAfterTheCallsEnded() throws Exception {
		ExecutorService pool = Executors.newSingleThreadExecutor();
		ExecutorService holder = Executors.newSingleThreadExecutor();
		try {
			this.contextRunner.withBean(Reports.class, () -> new Reports(pool)).run((context) -> {
				assertThat(context).hasNotFailed();
				Reports reports = context.getBean(Reports.class);
				LockTemplate locks = context.getBean(LockTemplate.class);
				try {
					// on the pool thread: the outer holder of k re-enters k through the
					// asynchronous method, whose future completes later on that thread
					CompletableFuture<String> later = pool
						.submit(() -> locks.execute("k", (lock) -> reports.later("k")))
						.get(10, TimeUnit.SECONDS);
					assertThat(later).isNotDone();
					assertThat(locks.isLocked("k")).as("the pending future holds k").isTrue();

					// an unrelated task on the same pool thread, after the calls on it
					// ended: k belongs to the future now, not to this thread
					Observation pending = pool.submit(() -> observe(reports, "k")).get(10, TimeUnit.SECONDS);
					System.out.printf("pool thread between tasks, future pending: fencing token %s, now(k) %s%n",
							pending.fencingToken(), pending.outcome());
					assertThat(pending.fencingToken()).as("fencing token on the pool thread between tasks").isEmpty();
					assertThat(pending.outcome()).as("now(k) on the pool thread while the future holds k")
						.isEqualTo("not acquired");

					reports.open();
					assertThat(later.get(10, TimeUnit.SECONDS)).isEqualTo("later k");
					assertThat(locks.isLocked("k")).as("released when the future completed").isFalse();

					// after everything completed: another thread holds k, and the pool
					// thread must wait for it like anyone else
					LockHandle held = holder.submit(() -> locks.acquire("k")).get(10, TimeUnit.SECONDS);
					Observation after;
					try {
						after = pool.submit(() -> observe(reports, "k")).get(10, TimeUnit.SECONDS);
					}
					finally {
						held.close();
					}
					System.out.printf(
							"pool thread after the future completed, k held elsewhere: fencing token %s, "
									+ "now(k) %s; now(k) ran %d time(s) in all%n",
							after.fencingToken(), after.outcome(), reports.nowRuns());
					assertThat(after.fencingToken()).isEmpty();
					assertThat(after.outcome()).isEqualTo("not acquired");
					assertThat(reports.nowRuns()).isZero();
				}
				finally {
					reports.open();
				}
			});
		}
		finally {
			pool.shutdownNow();
			holder.shutdownNow();
		}
	}

	private static Observation observe(Reports reports, String key) {
		OptionalLong fencingToken = DistributedLocks.currentFencingToken();
		String outcome;
		try {
			outcome = "ran: " + reports.now(key);
		}
		catch (LockAcquisitionException ex) {
			outcome = "not acquired";
		}
		return new Observation(fencingToken, outcome);
	}

	record Observation(OptionalLong fencingToken, String outcome) {
	}

	// 7: lockstep.on-lease-lost=interrupt

	@Test
	void interruptModeEndsTheCallWithLockLostExceptionAndLeavesTheCallerNotInterrupted() {
		this.contextRunner.withPropertyValues("lockstep.on-lease-lost=interrupt", "lockstep.lease-time=3s")
			.withBean(Guarded.class, () -> new Guarded(this.redis))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Guarded guarded = context.getBean(Guarded.class);
				long start = System.nanoTime();
				Throwable failure = catchThrowable(() -> guarded.deleteOwnKeyAndWait("interrupt"));
				boolean interrupted = Thread.interrupted();
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				System.out.printf("interrupt mode: body %s; call ended after %d ms with %s; caller interrupted: %s%n",
						guarded.outcome(), took.toMillis(), failure, interrupted);
				assertThat(guarded.outcome()).isEqualTo("deleted 1, interrupted");
				assertThat(failure).isInstanceOf(LockLostException.class).hasMessageContaining(PREFIX + "interrupt");
				assertThat(interrupted).as("caller interrupted after the call").isFalse();
				assertThat(took).isLessThan(Duration.ofSeconds(6));
			});
	}

	@Test
	void interruptModeNeverInterruptsAPoolThreadThatMovedOnToAnotherTask() throws Exception {
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			this.contextRunner.withPropertyValues("lockstep.on-lease-lost=interrupt", "lockstep.lease-time=3s")
				.withBean(Guarded.class, () -> new Guarded(this.redis))
				.run((context) -> {
					assertThat(context).hasNotFailed();
					Guarded guarded = context.getBean(Guarded.class);
					Future<List<Object>> call = pool.submit(() -> {
						Throwable failure = catchThrowable(() -> guarded.deleteOwnKeyAndWait("pool"));
						boolean interrupted = Thread.interrupted();
						List<Object> seen = new ArrayList<>();
						seen.add(failure);
						seen.add(interrupted);
						return seen;
					});
					Future<String> unrelated = pool.submit(() -> {
						try {
							Thread.sleep(1500);
							return Thread.currentThread().isInterrupted() ? "interrupted after sleeping" : "slept";
						}
						catch (InterruptedException ex) {
							return "interrupted while sleeping";
						}
					});
					List<Object> seen = call.get(30, TimeUnit.SECONDS);
					String next = unrelated.get(30, TimeUnit.SECONDS);
					System.out.printf("interrupt mode on a pool thread: call ended with %s, interrupted after it: %s; "
							+ "next task on that thread (1.5 s): %s%n", seen.get(0), seen.get(1), next);
					assertThat((Throwable) seen.get(0)).isInstanceOf(LockLostException.class);
					assertThat(seen.get(1)).as("pool thread interrupted after the call").isEqualTo(false);
					assertThat(next).isEqualTo("slept");
				});
		}
		finally {
			pool.shutdownNow();
		}
	}

	// 13: a constant key must be quoted

	@Test
	void constantKeyWithoutQuotesFailsTheStartNamingTheMethodAndTheQuotedForm() {
		this.contextRunner.withBean(ReportJob.class).run((context) -> {
			assertThat(context).hasFailed();
			List<String> messages = new ArrayList<>();
			for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
				messages.add(cause.getClass().getSimpleName() + ": " + cause.getMessage());
			}
			messages.forEach((message) -> System.out.printf("start-up failure: %s%n", message));
			assertThat(messages).anySatisfy((String message) -> assertThat(message)
				.contains(ReportJob.class.getSimpleName() + ".run(", "'report'"));
		});
	}

	// 14: lockstep.enabled=false

	@Test
	void disabledStarterStillGivesAWorkingLockTemplateAndAnnotationWithoutAnyRedisCommand() throws Exception {
		long commandsBefore = redisCommandCalls();
		this.contextRunner.withPropertyValues("lockstep.enabled=false")
			.withUserConfiguration(CounterConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Counter counter = context.getBean(Counter.class);
				LockTemplate locks = counter.locks();
				String ran = locks.execute("plain", (lock) -> "ran");
				assertThat(ran).isEqualTo("ran");
				long first = locks.execute("fence", LockHandle::fencingToken);
				long second = locks.execute("fence", LockHandle::fencingToken);
				assertThat(second).isGreaterThan(first);

				ExecutorService other = Executors.newSingleThreadExecutor();
				try {
					LockHandle held = other.submit(() -> locks.acquire("held")).get(10, TimeUnit.SECONDS);
					Optional<LockHandle> mine;
					try {
						mine = locks.tryAcquire("held");
						mine.ifPresent(LockHandle::close);
					}
					finally {
						held.close();
					}
					assertThat(mine).as("tryAcquire of a key another thread holds").isEmpty();
				}
				finally {
					other.shutdownNow();
				}

				int threads = 4;
				int calls = 200;
				ExecutorService callers = Executors.newFixedThreadPool(threads);
				try {
					CountDownLatch start = new CountDownLatch(1);
					List<Future<?>> done = new ArrayList<>();
					for (int i = 0; i < threads; i++) {
						done.add(callers.submit(() -> {
							assertThat(start.await(10, TimeUnit.SECONDS)).isTrue();
							for (int call = 0; call < calls; call++) {
								counter.increment("counter");
							}
							return null;
						}));
					}
					start.countDown();
					for (Future<?> caller : done) {
						caller.get(60, TimeUnit.SECONDS);
					}
				}
				finally {
					callers.shutdownNow();
				}
				System.out.printf(
						"lockstep.enabled=false: fencing tokens %d then %d; %d x %d annotated calls: "
								+ "count %d, overlaps %d%n",
						first, second, threads, calls, counter.count(), counter.overlaps());
				assertThat(counter.overlaps()).isZero();
				assertThat(counter.count()).isEqualTo(threads * calls);
			});
		long commandsAfter = redisCommandCalls();
		System.out.printf("lockstep.enabled=false: Redis commands before %d, after %d%n", commandsBefore,
				commandsAfter);
		assertThat(commandsAfter - commandsBefore).as("Redis commands sent").isZero();
	}

	/** Calls of every command the Redis has served, but INFO (which this test sends). */
	private long redisCommandCalls() {
		long calls = 0;
		for (Map.Entry<String, String> stat : this.redis.info("commandstats").entrySet()) {
			if (stat.getKey().startsWith("cmdstat_") && !stat.getKey().equals("cmdstat_info")) {
				for (String field : stat.getValue().split(",")) {
					if (field.startsWith("calls=")) {
						calls += Long.parseLong(field.substring("calls=".length()));
					}
				}
			}
		}
		return calls;
	}

	// 12: a release that cannot reach Redis

	@Test
	void releaseThatCannotReachRedisDoesNotFailTheCallThatReturned() {
		this.contextRunner.withPropertyValues("lockstep.lease-time=3s")
			.withBean(Pausing.class, () -> new Pausing(this.redis))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Pausing pausing = context.getBean(Pausing.class);
				AtomicReference<String> result = new AtomicReference<>();
				long start = System.nanoTime();
				Throwable failure;
				try {
					failure = catchThrowable(() -> result.set(pausing.pauseRedisAndReturn("paused")));
				}
				finally {
					this.redis.resume();
				}
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				System.out.printf("Redis paused inside the method: returned %s after %d ms, failure %s%n", result.get(),
						took.toMillis(), failure);
				assertThat(failure).as("failure of a call whose method returned").isNull();
				assertThat(result).hasValue("value");
				LockTemplate locks = context.getBean(LockTemplate.class);
				long fencingToken = locks.withWaitTime(Duration.ofSeconds(10))
					.execute("paused", LockHandle::fencingToken);
				assertThat(fencingToken).isPositive();
			});
	}

	static class Reports {

		private final ExecutorService pool;

		private final CompletableFuture<String> gate = new CompletableFuture<>();

		private final AtomicInteger nowRuns = new AtomicInteger();

		Reports(ExecutorService pool) {
			this.pool = pool;
		}

		/** Completes on the pool thread once {@link #open()} was called. */
		@DistributedLock(key = "#key")
		CompletableFuture<String> later(String key) {
			return this.gate.thenApplyAsync((go) -> "later " + key, this.pool);
		}

		@DistributedLock(key = "#key", waitTime = "300ms")
		String now(String key) {
			this.nowRuns.incrementAndGet();
			return "now " + key;
		}

		void open() {
			this.gate.complete("go");
		}

		int nowRuns() {
			return this.nowRuns.get();
		}

	}

	static class Guarded {

		private final RedisNode redis;

		private final AtomicReference<String> outcome = new AtomicReference<>();

		Guarded(RedisNode redis) {
			this.redis = redis;
		}

		/**
		 * Deletes its own lock key from outside, then waits up to 10 s, restoring the
		 * interrupt it may get.
		 */
		@DistributedLock(key = "#key")
		String deleteOwnKeyAndWait(String key) {
			Object deleted = this.redis.call("DEL", PREFIX + key);
			try {
				boolean counted = new CountDownLatch(1).await(10, TimeUnit.SECONDS);
				this.outcome.set("deleted " + deleted + ", " + (counted ? "counted" : "timed out"));
			}
			catch (InterruptedException ex) {
				this.outcome.set("deleted " + deleted + ", interrupted");
				Thread.currentThread().interrupt();
			}
			return this.outcome.get();
		}

		String outcome() {
			return this.outcome.get();
		}

	}

	static class ReportJob {

		@DistributedLock(key = "report")
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CounterConfiguration {

		@Bean
		Counter counter(LockTemplate locks) {
			return new Counter(locks);
		}

	}

	static class Counter {

		private final LockTemplate locks;

		private final AtomicInteger occupancy = new AtomicInteger();

		private final AtomicInteger overlaps = new AtomicInteger();

		private int count;

		Counter(LockTemplate locks) {
			this.locks = locks;
		}

		LockTemplate locks() {
			return this.locks;
		}

		/** A read-then-write increment: loses updates unless callers are excluded. */
		@DistributedLock(key = "#key")
		void increment(String key) {
			if (this.occupancy.incrementAndGet() > 1) {
				this.overlaps.incrementAndGet();
			}
			int value = this.count;
			Thread.yield();
			this.count = value + 1;
			this.occupancy.decrementAndGet();
		}

		int count() {
			return this.count;
		}

		int overlaps() {
			return this.overlaps.get();
		}

	}

	static class Pausing {

		private final RedisNode redis;

		Pausing(RedisNode redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "#key")
		String pauseRedisAndReturn(String key) {
			this.redis.pause();
			return "value";
		}

	}

}
