package io.lockstep.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * An inventory service whose concurrent stock deduction oversells without a distributed
 * lock. Starts an embedded Redis when no {@code spring.data.redis.*} is configured.
 */
@SpringBootApplication
@EnableScheduling
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
