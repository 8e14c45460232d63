package io.lockstep.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.DistributedLock;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The disabled starter ({@code lockstep.enabled=false}) still gives a working (local)
 * {@link io.lockstep.LockTemplate} and annotation, and sends no Redis command.
 */
@RedisTest
class DisabledStarterTests extends AbstractRedisStarterTests {

	private static final String PREFIX = "disabled-starter:";

	DisabledStarterTests() {
		super(PREFIX);
	}

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

}
