package io.lockstep.autoconfigure;

import java.util.List;

import io.lockstep.test.Cluster;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode.RedisNodeBuilder;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lockstep locks where the application's own connection factory points, never on another
 * server: a {@link JedisConnectionFactory} bean of the application's is followed
 * (standalone, Sentinel, Cluster) whatever {@code spring.data.redis.*} says; and an
 * application that dropped {@code lettuce-core} (Spring Boot's recipe for Jedis) is told
 * what Lockstep needs, in the start-up report.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class ApplicationConnectionTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@Test
	void locksWhereTheApplicationsJedisFactoryPointsNotWhereThePropertiesDo(RedisNode redis, CapturedOutput output) {
		int elsewhere = redis.port() + 1;
		this.contextRunner
			.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.port=" + elsewhere)
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RedisClientsTests.locksOn(redis, context, "own-jedis");
			});
		assertThat(output).contains("Lockstep opens a Lettuce client of its own to 127.0.0.1:" + redis.port())
			.contains("localhost:" + elsewhere);
		RedisClientsTests.assertOnlyTheTestIsConnected(redis);
	}

	@Test
	void locksWhereTheApplicationsJedisFactoryPointsWithoutAnyProperties(RedisNode redis) {
		this.contextRunner
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RedisClientsTests.locksOn(redis, context, "own-jedis-alone");
			});
	}

	@Test
	void locksOnTheMasterOfTheApplicationsJedisSentinelFactory(RedisFixture fixture) {
		Sentinels sentinels = fixture.sentinels(1, 3);
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration();
		configuration.master(Sentinels.MASTER_NAME);
		sentinels.sentinels().forEach((node) -> configuration.sentinel(node.host(), node.port()));
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + (sentinels.master().port() + 1))
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new JedisConnectionFactory(configuration))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RedisClientsTests.locksOn(sentinels.master(), context, "own-jedis-sentinel");
			});
	}

	@Test
	void locksOnTheApplicationsJedisClusterFactory(RedisFixture fixture) {
		Cluster cluster = fixture.cluster(3, 0);
		RedisClusterConfiguration configuration = new RedisClusterConfiguration();
		cluster.masters()
			.forEach((node) -> configuration
				.addClusterNode(new RedisNodeBuilder().listeningAt(node.host(), node.port()).build()));
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + (cluster.masters().get(0).port() + 100))
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new JedisConnectionFactory(configuration))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				List<String> keys = List.of("order:1", "order:2", "order:3");
				long held = context.getBean(io.lockstep.LockTemplate.class)
					.executeAll(keys,
							(lock) -> cluster.masters()
								.stream()
								.mapToLong((master) -> keys.stream()
									.filter((key) -> master.call("KEYS", "*" + key) instanceof List<?> found
											&& !found.isEmpty())
									.count())
								.sum());
				assertThat(held).as("lock keys on the Cluster's masters while held").isEqualTo(keys.size());
			});
	}

	@Test
	void withoutLettuceTheReportSaysWhatLockstepNeeds(RedisNode redis) {
		this.contextRunner.withClassLoader(new FilteredClassLoader("io.lettuce"))
			.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.port=" + redis.port())
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).as("Lockstep's report of %s", context.getStartupFailure()).isNotNull();
				System.out.printf("Without lettuce-core:%n%s%n%s%n", analysis.getDescription(), analysis.getAction());
				assertThat(analysis.getDescription()).contains("io.lettuce:lettuce-core").contains("Jedis");
				assertThat(analysis.getAction()).contains("io.lettuce:lettuce-core")
					.contains("spring.data.redis.client-type=jedis");
			});
	}

	@Test
	void anApplicationLeftOnLettuceWithJedisPresentIsToldTheSwitch(RedisNode redis, CapturedOutput output) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port())
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Jedis is on the classpath").contains("set spring.data.redis.client-type=jedis");
		this.contextRunner
			.withPropertyValues("spring.data.redis.client-type=lettuce", "spring.data.redis.port=" + redis.port())
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output.toString().split("Jedis is on the classpath", -1)).as("told once, not when chosen")
			.hasSize(2);
	}

}
