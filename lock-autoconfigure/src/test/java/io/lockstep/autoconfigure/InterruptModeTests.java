package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLock;
import io.lockstep.LockLostException;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code onLeaseLost = INTERRUPT}, against a real Redis: the call ends with
 * {@link io.lockstep.LockLostException} and no interrupt is left behind, on the caller or
 * on a pool thread that moved on to another task.
 */
@RedisTest
class InterruptModeTests extends AbstractRedisStarterTests {

	private static final String PREFIX = "interrupt-mode:";

	InterruptModeTests() {
		super(PREFIX);
	}

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
							// models the next task's 1.5 s on the thread: the window a
							// late interrupt would land in (not synchronisation)
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

}
