package io.lockstep.sample;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * A Redis container for {@link TestSampleApplication}; {@code @ServiceConnection} points
 * Spring Boot's Redis client at it. The image is {@code lockstep.test.redis-image}
 * (default {@code redis:7.4}).
 */
@TestConfiguration(proxyBeanMethods = false)
class ContainersConfig {

	@Bean
	@ServiceConnection(name = "redis")
	GenericContainer<?> redisContainer(Environment environment) {
		String image = environment.getProperty("lockstep.test.redis-image", "redis:7.4");
		return new GenericContainer<>(DockerImageName.parse(image)).withExposedPorts(6379);
	}

}
