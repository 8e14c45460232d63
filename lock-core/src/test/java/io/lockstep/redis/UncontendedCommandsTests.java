package io.lockstep.redis;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an uncontended acquire and release cost in Redis commands, counted by
 * {@code INFO commandstats} (the commands scripts run included): at most 6 for a read
 * lock and for a semaphore's permit, and still 6 for the plain lock (its write lock),
 * fencing included. The same figures as the benchmarks' command counts.
 */
@RedisTest
class UncontendedCommandsTests {

	private static final int PAIRS = 100;

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate locks;

	UncontendedCommandsTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void start() {
		this.redis.call("FLUSHALL");
		this.client = TestLocks.client(this.redis);
		this.locks = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(10)).build();
	}

	@AfterEach
	void stop() {
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void anUncontendedPlainPairStaysSixRedisCommands() {
		assertThat(commandsPerPair("plain", (locks) -> locks)).as("Redis commands per uncontended plain pair")
			.isEqualTo(6.0);
	}

	@Test
	void anUncontendedWritePairIsThePlainPairSixRedisCommands() {
		assertThat(commandsPerPair("write", LockTemplate::write)).as("Redis commands per uncontended write pair")
			.isEqualTo(6.0);
	}

	@Test
	void anUncontendedReadPairRunsAtMostSixRedisCommands() {
		assertThat(commandsPerPair("read", LockTemplate::read)).as("Redis commands per uncontended read pair")
			.isLessThanOrEqualTo(6.0);
	}

	@Test
	void anUncontendedPermitPairRunsAtMostSixRedisCommands() {
		assertThat(commandsPerPair("permit of 3", (locks) -> locks.withPermits(3)))
			.as("Redis commands per uncontended permit pair (3 permits)")
			.isLessThanOrEqualTo(6.0);
	}

	/**
	 * Redis commands per acquire + release of one key by the view, over {@value #PAIRS}
	 * pairs after one that connects and loads the scripts; prints them by name.
	 */
	private double commandsPerPair(String kind, Function<LockTemplate, LockTemplate> view) {
		LockTemplate template = view.apply(this.locks);
		template.acquire("warm-up").close();
		Map<String, Long> before = byName();
		long totalBefore = TestLocks.commandCalls(this.redis);
		for (int i = 0; i < PAIRS; i++) {
			template.acquire("job").close();
		}
		double perPair = (double) (TestLocks.commandCalls(this.redis) - totalBefore) / PAIRS;
		Map<String, String> perName = new TreeMap<>();
		byName().forEach((name, calls) -> {
			long delta = calls - before.getOrDefault(name, 0L);
			if (delta > 0) {
				perName.put(name, String.format("%.2f", (double) delta / PAIRS));
			}
		});
		System.out.printf("uncontended %s acquire + release: %.2f Redis commands per pair (incl. inside Lua): %s%n",
				kind, perPair, perName);
		return perPair;
	}

	private Map<String, Long> byName() {
		Map<String, Long> calls = new TreeMap<>();
		this.redis.info("commandstats").forEach((stat, value) -> {
			if (stat.startsWith("cmdstat_") && !stat.equals("cmdstat_info")) {
				String count = value.split(",")[0];
				calls.put(stat.substring("cmdstat_".length()), Long.parseLong(count.substring(count.indexOf('=') + 1)));
			}
		});
		return calls;
	}

}
