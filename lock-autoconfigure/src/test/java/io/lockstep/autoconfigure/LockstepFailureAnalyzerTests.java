package io.lockstep.autoconfigure;

import io.lockstep.DistributedLock;
import io.lockstep.internal.LockConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A start-up failure caused by Lockstep is explained in Spring Boot's failure report:
 * what is wrong (naming the method or the property) and what to do, not a stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class LockstepFailureAnalyzerTests {

	@Test
	void isRegisteredForSpringBoot() {
		// as Spring Boot's FailureAnalyzers loads them
		SpringFactoriesLoader.ArgumentResolver arguments = SpringFactoriesLoader.ArgumentResolver
			.of(BeanFactory.class, new DefaultListableBeanFactory())
			.and(Environment.class, new StandardEnvironment());
		assertThat(SpringFactoriesLoader.forDefaultResourceLocation()
			.load(FailureAnalyzer.class, arguments,
					SpringFactoriesLoader.FailureHandler.handleMessage((message, ex) -> {
					})))
			.hasAtLeastOneElementOfType(LockstepFailureAnalyzer.class);
	}

	@Test
	void aBrokenAnnotationIsDescribedWithWhatToDo(CapturedOutput output) {
		assertThatException().isThrownBy(() -> run(BrokenKeyApplication.class, "--lockstep.enabled=false"))
			.satisfies((ex) -> assertThat(new LockstepFailureAnalyzer().analyze(ex)).isNotNull());
		String report = output.getOut() + output.getErr();
		assertThat(report).contains("APPLICATION FAILED TO START")
			.contains("Description:")
			.contains("@DistributedLock on " + Reports.class.getName() + ".build(): key 'report'")
			.contains("Action:")
			.contains("quote a constant key: key = \"'report'\"");
		System.out.printf("The report:%n%s%n", report.substring(report.indexOf("APPLICATION FAILED TO START")));
	}

	@Test
	void aWrongPropertyIsDescribedWithWhatToDo(CapturedOutput output) {
		assertThatException().isThrownBy(() -> run(PlainApplication.class, "--lockstep.command-timeout=20s",
				"--lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3"));
		String report = output.getOut() + output.getErr();
		assertThat(report).contains("Description:")
			.contains("lockstep.command-timeout (20s) must not exceed a third of the shortest lease, "
					+ "lockstep.lease-time (30s)")
			.contains("Action:")
			.contains("Set lockstep.command-timeout to at most 10s, or lengthen lockstep.lease-time");
	}

	@Test
	void analyzesTheLockstepExceptionWhereverItIsInTheChain() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
			.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2")
			.run((context) -> {
				FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription())
					.startsWith("lockstep.redlock.nodes must list at least 3 independent Redis masters");
				assertThat(analysis.getAction()).contains("redis://host:port");
				assertThat(analysis.getCause()).isInstanceOf(LockConfigurationException.class);
			});
		assertThat(new LockstepFailureAnalyzer().analyze(new IllegalStateException("not ours"))).isNull();
	}

	private static void run(Class<?> application, String... args) {
		new SpringApplicationBuilder(application).web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off")
			.run(args)
			.close();
	}

	@SpringBootConfiguration
	@ImportAutoConfiguration(LockstepAutoConfiguration.class)
	static class PlainApplication {

	}

	@SpringBootConfiguration
	@ImportAutoConfiguration(LockstepAutoConfiguration.class)
	static class BrokenKeyApplication {

		@Bean
		Reports reports() {
			return new Reports();
		}

	}

	public static class Reports {

		@DistributedLock(key = "report")
		public void build() {
		}

	}

}
