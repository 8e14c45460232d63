package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.Cluster;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The starter on Sentinel and on a Cluster through Spring Boot's own
 * {@code spring.data.redis.*}, with unchanged user code.
 */
@RedisTest
class TopologyAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withPropertyValues("lockstep.lease-time=3s");

	@Test
	void locksThroughSpringDataRedisSentinelProperties(RedisFixture fixture) {
		Sentinels sentinels = fixture.sentinels(1, 3);
		String nodes = sentinels.sentinels()
			.stream()
			.map((node) -> node.host() + ":" + node.port())
			.collect(Collectors.joining(","));
		this.contextRunner
			.withPropertyValues("spring.data.redis.sentinel.master=" + Sentinels.MASTER_NAME,
					"spring.data.redis.sentinel.nodes=" + nodes)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = connected(context.getBean(LockTemplate.class), "sentinel");
				long token = locks.execute("sentinel", LockHandle::fencingToken);
				assertThat(token).isPositive();
				assertThat(sentinels.master().call("EXISTS", "lockstep:__fence")).isEqualTo(1L);
			});
	}

	@Test
	void replicaAcknowledgementsAreAProperty(RedisFixture fixture) {
		RedisFixture.Replicated replicated = fixture.replicated(1);
		this.contextRunner
			.withPropertyValues("spring.data.redis.port=" + replicated.master().port(),
					"lockstep.replication.acknowledgements=1", "lockstep.replication.timeout=150ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = context.getBean(LockTemplate.class);
				String replicatedResult = connected(locks.withWaitTime(Duration.ofSeconds(10)), "replicated")
					.execute("replicated", (lock) -> "done");
				assertThat(replicatedResult).isEqualTo("done");
				replicated.replica().pause();
				try {
					assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> locks.tryExecute("unreplicated", (lock) -> "done"))
						.withMessageContaining("replica");
				}
				finally {
					replicated.replica().resume();
				}
			});
	}

	@Test
	void locksThroughSpringDataRedisClusterProperties(RedisFixture fixture) {
		Cluster cluster = fixture.cluster(3, 0);
		this.contextRunner
			.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", cluster.addresses()))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				// warmed up on a key of its own lock: no other slot gets a fencing
				// counter
				LockTemplate locks = connected(context.getBean(LockTemplate.class), "order:1");
				List<String> keys = List.of("order:1", "order:2", "order:3", "order:4");
				long token = locks.executeAll(keys, LockHandle::fencingToken);
				assertThat(token).isPositive();
				Optional<LockHandle> one = locks.withWaitTime(Duration.ZERO).tryAcquire("order:1");
				assertThat(one).isPresent();
				one.get().close();
				long stored = 0;
				for (RedisNode master : cluster.masters()) {
					stored += (Long) master.call("DBSIZE");
				}
				// only fencing counters remain, one per slot used
				assertThat(stored).isBetween(1L, 4L);
			});
	}

	/**
	 * The template once a lock went through: its first command connects (on a Cluster, to
	 * every node) and loads the scripts, which can take longer than the command timeout
	 * on a loaded machine, and a failed call is not retried.
	 */
	private static LockTemplate connected(LockTemplate locks, String key) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (true) {
			try {
				locks.execute(key, (lock) -> null);
				return locks;
			}
			catch (LockException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw ex;
				}
			}
		}
	}

}
