package io.lockstep.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lockstep.DistributedLocks;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads of two instances (two lock clients) lock a few names at once, as
 * ShedLock's fuzz test does: each holder increments its name's counter by a read and a
 * separate write (an update another holder could lose), checks that it is alone and that
 * its fencing token is above every earlier holder's. Every check is counted.
 */
@RedisTest
class LockstepLockProviderFuzzTests {

	private static final int THREADS_PER_INSTANCE = 4;

	private static final int ATTEMPTS_PER_THREAD = 150;

	private static final List<String> NAMES = List.of("fuzz-a", "fuzz-b", "fuzz-c");

	@Test
	void holdersOfANameNeverOverlapAndNoUpdateIsLost(RedisNode redis) throws Exception {
		RedisClient client = TwoInstances.client(redis.port());
		try (RedisLockTemplate first = RedisLockTemplate.builder(client).build();
				RedisLockTemplate second = RedisLockTemplate.builder(client).build()) {
			List<LockstepLockProvider> instances = List.of(new LockstepLockProvider(first),
					new LockstepLockProvider(second));
			List<Name> names = NAMES.stream().map(Name::new).toList();
			ExecutorService threads = Executors.newFixedThreadPool(THREADS_PER_INSTANCE * instances.size());
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < THREADS_PER_INSTANCE * instances.size(); t++) {
				LockstepLockProvider provider = instances.get(t % instances.size());
				int offset = t;
				done.add(threads.submit(() -> {
					start.await();
					for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
						names.get((i + offset) % names.size()).attempt(provider);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : done) {
				future.get(2, TimeUnit.MINUTES);
			}
			threads.shutdown();
			long attempts = 0;
			long acquired = 0;
			for (Name name : names) {
				System.out.printf(
						"fuzz %s: %d attempts, %d acquired, %d refused; counter %d; overlaps %d, "
								+ "fencing tokens out of order %d, checks %d%n",
						name.name, name.attempts.get(), name.acquired.get(), name.refused.get(), name.counter.get(),
						name.overlaps.get(), name.tokensOutOfOrder.get(), name.checks.get());
				assertThat(name.overlaps).hasValue(0);
				assertThat(name.tokensOutOfOrder).hasValue(0);
				assertThat(name.counter).as("no update lost").hasValue(name.acquired.get());
				assertThat(name.checks).hasValue(2 * name.acquired.get());
				attempts += name.attempts.get();
				acquired += name.acquired.get();
				assertThat(name.refused.get()).as("%s was contended", name.name).isPositive();
			}
			assertThat(attempts).isEqualTo((long) THREADS_PER_INSTANCE * instances.size() * ATTEMPTS_PER_THREAD);
			assertThat(acquired).isPositive();
			assertThat(first.leasesLost() + second.leasesLost()).isZero();
		}
		finally {
			client.shutdown();
		}
	}

	/** One lock name and what its holders saw. */
	private static final class Name {

		private final String name;

		private final AtomicInteger inside = new AtomicInteger();

		/** Incremented by a read and a separate write, only while the lock is held. */
		private final AtomicLong counter = new AtomicLong();

		private final AtomicLong lastToken = new AtomicLong();

		private final AtomicLong attempts = new AtomicLong();

		private final AtomicLong acquired = new AtomicLong();

		private final AtomicLong refused = new AtomicLong();

		private final AtomicLong overlaps = new AtomicLong();

		private final AtomicLong tokensOutOfOrder = new AtomicLong();

		private final AtomicLong checks = new AtomicLong();

		Name(String name) {
			this.name = name;
		}

		void attempt(LockstepLockProvider provider) {
			this.attempts.incrementAndGet();
			Optional<SimpleLock> lock = provider
				.lock(TwoInstances.config(this.name, Duration.ofSeconds(30), Duration.ZERO));
			if (lock.isEmpty()) {
				this.refused.incrementAndGet();
				return;
			}
			try {
				this.acquired.incrementAndGet();
				if (this.inside.incrementAndGet() != 1) {
					this.overlaps.incrementAndGet();
				}
				this.checks.incrementAndGet();
				long token = DistributedLocks.currentFencingToken().orElseThrow();
				if (token <= this.lastToken.get()) {
					this.tokensOutOfOrder.incrementAndGet();
				}
				this.lastToken.set(token);
				this.checks.incrementAndGet();
				long value = this.counter.get();
				Thread.yield();
				this.counter.set(value + 1);
				this.inside.decrementAndGet();
			}
			finally {
				lock.get().unlock();
			}
		}

	}

}
