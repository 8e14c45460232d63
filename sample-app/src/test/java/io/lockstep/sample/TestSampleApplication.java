package io.lockstep.sample;

import java.util.Arrays;

import org.springframework.boot.SpringApplication;

/**
 * Runs the sample application against a Redis container started by Testcontainers
 * ({@link ContainersConfig}) instead of the embedded Redis: run this class's {@code main}
 * from the IDE, or {@code ./mvnw -pl sample-app -am spring-boot:test-run}. Needs a Docker
 * engine; {@code -Dlockstep.test.redis-image=...} picks another image than
 * {@code redis:7.4}. Not a test: the build never runs it.
 */
public class TestSampleApplication {

	public static void main(String[] args) {
		SpringApplication.from(SampleApplication::main).with(ContainersConfig.class).run(withoutEmbeddedRedis(args));
	}

	private static String[] withoutEmbeddedRedis(String[] args) {
		String[] all = Arrays.copyOf(args, args.length + 1);
		all[args.length] = "--sample.embedded-redis=false";
		return all;
	}

}
