package io.lockstep.autoconfigure;

import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Every bad {@code lockstep.*} value fails start-up through Spring Boot's failure report,
 * which names the property as the application's configuration writes it, never as a raw
 * exception of the lock client about one of its own parameters.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension.class)
class PropertyValuesTests {

	@ParameterizedTest(name = "{0}={1}")
	@CsvSource(delimiter = '|', textBlock = """
			lockstep.lease-time                    | -5s    | must be between 30ms and 1d, got -5s
			lockstep.lease-time                    | 0s     | must be between 30ms and 1d, got 0s
			lockstep.locks.stock.lease-time        | -2s    | must be between 30ms and 1d, got -2s
			lockstep.locks.stock.wait-time         | -1s    | must be between 0s and 1h, got -1s
			lockstep.locks.stock.min-hold-time     | -1s    | must be between 0s and 1d, got -1s
			lockstep.lock-delay                    | -1s    | must be between 0s and 1d, got -1s
			lockstep.locks.stock.lock-delay        | -3s    | must be between 0s and 1d, got -3s
			lockstep.wait-time                     | -1s    | must be between 0s and 1h, got -1s
			lockstep.max-hold-time                 | 0s     | must be positive, got 0s
			lockstep.command-timeout               | -1ms   | must be between 1ms and 1m, got -1ms
			lockstep.replication.acknowledgements  | -1     | must not be negative, got -1
			lockstep.replication.timeout           | 0ms    | must be positive, got 0s
			lockstep.redlock.clock-drift-factor    | 0.7    | must be between 0 and 0.5, got 0.7
			lockstep.redlock.node-timeout          | -200ms | must be positive, got -200ms
			""")
	void aBadValueIsReportedUnderItsPropertyName(String property, String value, String reason, RedisNode redis,
			CapturedOutput output) {
		assertThatException()
			.isThrownBy(() -> new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
				.properties("spring.main.banner-mode=off")
				.run("--spring.data.redis.port=" + redis.port(), "--" + property + "=" + value)
				.close());
		String all = output.getOut() + output.getErr();
		assertThat(all).contains("APPLICATION FAILED TO START");
		String report = all.substring(all.lastIndexOf("APPLICATION FAILED TO START"));
		assertThat(report).contains("Property: " + property)
			.contains("Reason: " + property + " " + reason)
			.contains("Action:")
			.doesNotContain("IllegalArgumentException")
			.doesNotContain("'commandTimeout'")
			.doesNotContain("'replicas'");
		System.out.printf("%s=%s:%n%s%n", property, value, report);
	}

	@SpringBootConfiguration
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class })
	static class Application {

	}

}
