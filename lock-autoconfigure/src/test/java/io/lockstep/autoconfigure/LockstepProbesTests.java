package io.lockstep.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code docs/operations.md} says of Kubernetes probes: Lockstep puts its
 * {@code lockstep} indicator in neither probe group, so with Redis down it is DOWN while
 * liveness and readiness stay UP; an application that adds it to readiness (and only
 * there) takes the instance out of traffic while its locks cannot work.
 */
class LockstepProbesTests {

	@Test
	void withRedisDownTheLockstepIndicatorIsDownAndNeitherProbeIs() throws Exception {
		try (ConfigurableApplicationContext context = application()) {
			HealthEndpoint health = context.getBean(HealthEndpoint.class);
			Status lockstep = health.healthForPath("lockstep").getStatus();
			Status liveness = health.healthForPath("liveness").getStatus();
			Status readiness = health.healthForPath("readiness").getStatus();
			System.out.printf("Redis down, default probe groups: lockstep %s, liveness %s, readiness %s%n", lockstep,
					liveness, readiness);
			assertThat(lockstep).isEqualTo(Status.DOWN);
			assertThat(liveness).isEqualTo(Status.UP);
			assertThat(readiness).isEqualTo(Status.UP);
		}
	}

	@Test
	void readinessThatIncludesLockstepIsDownWhileRedisIsDown() throws Exception {
		try (ConfigurableApplicationContext context = application(
				"--management.endpoint.health.group.readiness.include=readinessState,lockstep")) {
			HealthEndpoint health = context.getBean(HealthEndpoint.class);
			Status liveness = health.healthForPath("liveness").getStatus();
			Status readiness = health.healthForPath("readiness").getStatus();
			System.out.printf("Redis down, readiness includes lockstep: liveness %s, readiness %s%n", liveness,
					readiness);
			assertThat(readiness).isEqualTo(Status.DOWN);
			assertThat(liveness).isEqualTo(Status.UP);
		}
	}

	/** The application with probes on and its Redis on a port nothing listens on. */
	private static ConfigurableApplicationContext application(String... more) throws Exception {
		// no web server here: the health endpoint is made available over JMX
		List<String> args = new ArrayList<>(List.of("--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + RedlockHealthTests.closedPort(), "--lockstep.command-timeout=500ms",
				"--management.endpoint.health.probes.enabled=true", "--spring.main.banner-mode=off",
				"--spring.jmx.enabled=true", "--spring.jmx.unique-names=true",
				"--management.endpoints.jmx.exposure.include=health"));
		args.addAll(List.of(more));
		return new SpringApplicationBuilder(ProbedApplication.class).web(WebApplicationType.NONE)
			.run(args.toArray(String[]::new));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ProbedApplication {

	}

}
