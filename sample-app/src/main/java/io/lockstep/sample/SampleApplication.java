package io.lockstep.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * An inventory service whose concurrent stock deduction oversells without a distributed
 * lock. Starts an embedded Redis when no {@code spring.data.redis.*} is configured. Its
 * own settings are {@code sample.*} ({@link SampleProperties}).
 */
@SpringBootApplication
@EnableScheduling
@EnableConfigurationProperties(SampleProperties.class)
public class SampleApplication {

	public static void main(String[] args) {
		StopSignals.exitZeroAfterShutdown();
		SpringApplication.run(SampleApplication.class, args);
	}

}
