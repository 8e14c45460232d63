package io.lockstep.autoconfigure;

import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.DistributedLock;
import io.lockstep.DistributedLocks;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lock re-entered by an asynchronous {@code @DistributedLock} method, against a real
 * Redis: a lock handed to a future does not stay on the pool thread that handed it over.
 */
@RedisTest
class AsyncMethodLocksTests extends AbstractRedisStarterTests {

	private static final String PREFIX = "async-methods:";

	AsyncMethodLocksTests() {
		super(PREFIX);
	}

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

}
