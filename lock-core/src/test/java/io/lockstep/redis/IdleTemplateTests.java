package io.lockstep.redis;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An uncontended pair does no work that only waiting needs (no subscription, no
 * registration, no timer of its own), and a template that holds nothing leaves every
 * thread of the library asleep: none of them uses CPU while the application is idle.
 */
@RedisTest
class IdleTemplateTests {

	private final RedisNode redis;

	private RedisClient client;

	IdleTemplateTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.redis.call("FLUSHALL");
	}

	@AfterEach
	void disconnect() {
		this.client.shutdown();
	}

	@Test
	void anIdleTemplateWakesNoThreadAndAnUncontendedPairSubscribesToNothing() throws InterruptedException {
		// a short lease: the watchdog makes passes while the pairs run (renewals due
		// every
		// 100 ms), and must stop once nothing is held
		try (RedisLockTemplate locks = TestLocks.template(this.client, Duration.ofMillis(300),
				Duration.ofMillis(100))) {
			this.redis.call("CONFIG", "RESETSTAT");
			for (int i = 0; i < 100; i++) {
				try (LockHandle handle = locks.acquire("idle-" + (i % 10))) {
					assertThat(handle.isHeld()).isTrue();
					if (i % 20 == 0) {
						// held across a renewal now and then: the watchdog renews while
						// busy
						Thread.sleep(150);
					}
				}
			}
			assertThat(
					TestLocks.commandCalls(this.redis, "subscribe") + TestLocks.commandCalls(this.redis, "psubscribe")
							+ TestLocks.commandCalls(this.redis, "ssubscribe"))
				.as("subscriptions made by 100 uncontended pairs")
				.isZero();
			assertThat(locks.heldLocks()).isEmpty();
			// models the time the watchdog takes for its last pass after the last lease
			// (its
			// renewal time, 100 ms, at most)
			Thread.sleep(500);
			Map<String, Long> before = cpuOfLibraryThreads();
			// idle: the application does nothing for 2 s
			Thread.sleep(2_000);
			Map<String, Long> after = cpuOfLibraryThreads();
			Map<String, Long> woke = new TreeMap<>();
			after.forEach((thread, cpu) -> {
				long used = cpu - before.getOrDefault(thread, 0L);
				if (used > 0) {
					woke.put(thread, used);
				}
			});
			System.out.printf("idle template: library threads %s, CPU used while idle for 2 s: %s%n", after.keySet(),
					woke);
			assertThat(after).as("the library's threads").isNotEmpty();
			assertThat(woke).as("library threads that used CPU (ns) while the template was idle").isEmpty();
		}
	}

	/** CPU time so far of each live thread of the library, by name and id. */
	private static Map<String, Long> cpuOfLibraryThreads() {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		Map<String, Long> cpu = new TreeMap<>();
		for (Thread thread : Thread.getAllStackTraces().keySet()) {
			if (thread.getName().startsWith("lockstep-")) {
				long nanos = threads.getThreadCpuTime(thread.getId());
				if (nanos >= 0) {
					cpu.put(thread.getName() + "#" + thread.getId(), nanos);
				}
			}
		}
		return cpu;
	}

}
