package io.lockstep.autoconfigure;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

import io.lockstep.actuate.LockstepHealthIndicator;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application on Redlock is healthy when its locks are: Spring Boot's {@code redis}
 * indicator does not check a {@code localhost:6379} nobody configured, and the
 * {@code lockstep} indicator is DOWN, with the reason, while the nodes refuse locks.
 */
@RedisTest
class RedlockHealthTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisHealthContributorAutoConfiguration.class, LockstepAutoConfiguration.class,
				LockstepActuatorAutoConfiguration.class))
		.withInitializer((context) -> new RedlockHealthEnvironmentPostProcessor()
			.postProcessEnvironment(context.getEnvironment(), new SpringApplication()));

	@Test
	void bootsRedisIndicatorIsOffWithRedlockUnlessTheApplicationNamesARedisOfItsOwn(RedisFixture fixture) {
		String nodes = nodes(fixture.masters(3, "--appendonly", "yes"));
		this.contextRunner.withPropertyValues(nodes)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean("redisHealthContributor")
				.hasSingleBean(LockstepHealthIndicator.class));
		this.contextRunner.withPropertyValues(nodes, "spring.data.redis.port=6390")
			.run((context) -> assertThat(context).hasBean("redisHealthContributor"));
		this.contextRunner.withPropertyValues(nodes, "management.health.redis.enabled=true")
			.run((context) -> assertThat(context).hasBean("redisHealthContributor"));
		this.contextRunner.withPropertyValues("spring.data.redis.port=6390")
			.run((context) -> assertThat(context).hasBean("redisHealthContributor"));
		this.contextRunner.withPropertyValues(nodes, "lockstep.enabled=false")
			.run((context) -> assertThat(context).hasBean("redisHealthContributor"));
	}

	/**
	 * The whole application, as Spring Boot starts it (the post-processor registered in
	 * {@code spring.factories}): UP on Redlock; the control names a Redis of its own that
	 * is down, and Boot's indicator, kept, reports it.
	 */
	@Test
	void anApplicationOnRedlockIsUpAsItsLocksAre(RedisFixture fixture) throws Exception {
		String nodes = nodes(fixture.masters(3, "--appendonly", "yes"));
		try (ConfigurableApplicationContext context = application(nodes)) {
			var health = context.getBean(HealthEndpoint.class).health();
			System.out.printf("Redlock application health: %s%n", health.getStatus());
			assertThat(context.getEnvironment().getProperty("management.health.redis.enabled")).isEqualTo("false");
			assertThat(context.containsBean("redisHealthContributor")).isFalse();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
		}
		try (ConfigurableApplicationContext context = application(nodes, "--spring.data.redis.port=" + closedPort())) {
			assertThat(context.containsBean("redisHealthContributor")).isTrue();
			assertThat(context.getBean(HealthEndpoint.class).health().getStatus()).isEqualTo(Status.DOWN);
		}
	}

	@Test
	void lockstepHealthIsDownWithTheReasonWhileTheNodesDoNotPersist(RedisFixture fixture) {
		List<RedisNode> volatileNodes = fixture.masters(3);
		this.contextRunner.withPropertyValues(nodes(volatileNodes)).run((context) -> {
			Health health = context.getBean(LockstepHealthIndicator.class).health(true);
			System.out.printf("lockstep health on 3 nodes without persistence: %s %s%n", health.getStatus(),
					health.getDetails().get("reason"));
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails().get("reason")).asString()
				.startsWith("Redlock cannot lock: 3 of 3 nodes refused: no persistence")
				.contains(volatileNodes.get(0).uri() + ": refused, it does not persist its data");
		});
	}

	private static ConfigurableApplicationContext application(String nodes, String... more) {
		// no web server here: the health endpoint is made available over JMX
		List<String> args = new ArrayList<>(
				List.of("--" + nodes, "--spring.main.banner-mode=off", "--spring.jmx.enabled=true",
						"--spring.jmx.unique-names=true", "--management.endpoints.jmx.exposure.include=health"));
		args.addAll(List.of(more));
		return new SpringApplicationBuilder(RedlockApplication.class).web(WebApplicationType.NONE)
			.run(args.toArray(String[]::new));
	}

	private static String nodes(List<RedisNode> nodes) {
		return "lockstep.redlock.nodes=" + String.join(",", nodes.stream().map(RedisNode::uri).toList());
	}

	/** A 127.0.0.1 port that nothing listens on. */
	static int closedPort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class RedlockApplication {

	}

}
