package io.lockstep.autoconfigure;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.DistributedLock;
import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Meter cardinality does not follow the keys: 200,000 distinct keys, locked through the
 * template, a named view and an annotated method, make meters only per lock name, leave
 * no key, renewal task or waiter behind, and do not grow the heap.
 */
@RedisTest
class MeterCardinalityTests {

	private static final int KEYS = 200_000;

	private static final int THREADS = 4;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, ObservationAutoConfiguration.class,
				MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, LockstepObservationAutoConfiguration.class,
				LockstepAutoConfiguration.class))
		.withUserConfiguration(OrdersConfiguration.class);

	@Test
	void twoHundredThousandDistinctKeysMakeMetersPerLockNameOnly(RedisNode redis) {
		redis.call("FLUSHALL");
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
			LockTemplate named = locks.named("orders");
			Orders orders = context.getBean(Orders.class);
			// warm up: every path once, so the meters that should exist do
			locks.execute("warm", (lock) -> null);
			named.execute("warm", (lock) -> null);
			orders.place("warm");
			int metersBefore = meters.getMeters().size();
			long heapBefore = usedHeapAfterGc();
			long start = System.nanoTime();
			ExecutorService pool = Executors.newFixedThreadPool(THREADS);
			try {
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < THREADS; t++) {
					int thread = t;
					workers.add(pool.submit(() -> {
						for (int i = thread; i < KEYS; i += THREADS) {
							String key = "k" + i;
							switch (i % 3) {
								case 0 -> locks.execute(key, (lock) -> null);
								case 1 -> named.execute(key, (lock) -> null);
								default -> orders.place(key);
							}
						}
						return null;
					}));
				}
				for (Future<?> worker : workers) {
					worker.get(5, TimeUnit.MINUTES);
				}
			}
			finally {
				pool.shutdownNow();
			}
			long seconds = (System.nanoTime() - start) / 1_000_000_000;
			long heapAfter = usedHeapAfterGc();
			Set<String> lockTags = new TreeSet<>();
			int lockstepMeters = 0;
			for (Meter meter : meters.getMeters()) {
				if (meter.getId().getName().startsWith("lockstep.")) {
					lockstepMeters++;
					String tag = meter.getId().getTag("lock");
					if (tag != null) {
						lockTags.add(tag);
					}
				}
			}
			long keysLeft = (Long) redis.call("DBSIZE") - 1;
			long growthMb = (heapAfter - heapBefore) / (1024 * 1024);
			System.out.printf(
					"meters: %,d distinct keys locked in %d s -> %d meters before, %d after (%d lockstep.*), "
							+ "%d lock tags %s; heap %+d MB after GC; renewal tasks %d, keys waited for %d, "
							+ "keys left %d (besides the fencing counter)%n",
					KEYS, seconds, metersBefore, meters.getMeters().size(), lockstepMeters, lockTags.size(),
					lockTags.stream().limit(5).toList(), growthMb, EngineTemplate.of(locks).engine().registered(),
					EngineTemplate.of(locks).engine().keysWaitedFor(), keysLeft);
			assertThat(meters.getMeters()).hasSize(metersBefore);
			assertThat(lockTags).hasSizeLessThanOrEqualTo(3).noneMatch((tag) -> tag.startsWith("k"));
			assertThat(growthMb).isLessThan(50);
			assertThat(EngineTemplate.of(locks).engine().registered()).isZero();
			assertThat(EngineTemplate.of(locks).engine().keysWaitedFor()).isZero();
			assertThat(keysLeft).isZero();
		});
	}

	private static long usedHeapAfterGc() {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		return memory.getHeapMemoryUsage().getUsed();
	}

	@Configuration(proxyBeanMethods = false)
	static class OrdersConfiguration {

		@Bean
		Orders orders() {
			return new Orders();
		}

	}

	public static class Orders {

		@DistributedLock(key = "#id")
		public void place(String id) {
		}

	}

}
