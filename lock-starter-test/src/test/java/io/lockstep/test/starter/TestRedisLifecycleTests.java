package io.lockstep.test.starter;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.lockstep.test.support.LocalLocks;
import io.lockstep.test.support.TestRedis;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The life of a {@link TestRedis} server, seen from outside: test classes run through the
 * JUnit Platform launcher report the server they used, and this class checks what became
 * of it after they ran.
 */
class TestRedisLifecycleTests {

	/** Per test class run here: the PID of its server and its application context. */
	static final Map<String, Used> used = new ConcurrentHashMap<>();

	@Test
	void eachClassGetsItsOwnServerStoppedByPidAfterItsContextIsClosed() {
		TestExecutionSummary summary = run(FirstClass.class, SecondClass.class);
		assertThat(summary.getFailures()).isEmpty();
		assertThat(summary.getTestsSucceededCount()).isEqualTo(2);
		Used first = used.get(FirstClass.class.getSimpleName());
		Used second = used.get(SecondClass.class.getSimpleName());
		System.out.printf("@TestRedis lifecycle: FirstClass on PID %d, SecondClass on PID %d; both stopped: %s%n",
				first.pid(), second.pid(), !alive(first.pid()) && !alive(second.pid()));
		assertThat(first.pid()).isNotEqualTo(second.pid());
		assertThat(alive(first.pid())).isFalse();
		assertThat(alive(second.pid())).isFalse();
		assertThat(first.context().isActive()).isFalse();
		assertThat(second.context().isActive()).isFalse();
	}

	@Test
	void nestedClassesShareTheirEnclosingClassesServer() {
		TestExecutionSummary summary = run(Enclosing.class);
		assertThat(summary.getFailures()).isEmpty();
		assertThat(summary.getTestsSucceededCount()).isEqualTo(2);
		Used outer = used.get(Enclosing.class.getSimpleName());
		Used inner = used.get(Enclosing.Inner.class.getSimpleName());
		assertThat(inner.pid()).isEqualTo(outer.pid());
		assertThat(alive(outer.pid())).isFalse();
	}

	@Test
	void testRedisAndLocalLocksTogetherFailSayingSo() {
		TestExecutionSummary summary = run(BothAnnotations.class);
		assertThat(summary.getTestsSucceededCount()).isZero();
		assertThat(summary.getFailures()).isNotEmpty();
		Throwable failure = summary.getFailures().get(0).getException();
		while (failure.getCause() != null && !failure.getMessage().contains("@LocalLocks")) {
			failure = failure.getCause();
		}
		assertThat(failure).hasMessage(BothAnnotations.class.getName()
				+ " has both @TestRedis and @LocalLocks: choose one (a real Redis, or JVM-local locks without Redis)");
	}

	@Test
	void aServerThatCannotStartFailsTheContextSayingWhy() {
		TestExecutionSummary summary = run(BadArguments.class);
		assertThat(summary.getTestsSucceededCount()).isZero();
		assertThat(summary.getFailures()).isNotEmpty();
		Throwable failure = summary.getFailures().get(0).getException();
		while (failure.getCause() != null && !failure.getMessage().startsWith("@TestRedis")) {
			failure = failure.getCause();
		}
		System.out.printf("@TestRedis with a bad option: %s%n", failure.getMessage().lines().findFirst().orElse(""));
		assertThat(failure.getMessage())
			.startsWith("@TestRedis on " + BadArguments.class.getName() + " could not start a redis-server: ")
			.contains("exited with")
			.contains("maxmemory");
	}

	private static TestExecutionSummary run(Class<?>... classes) {
		LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
			.selectors(List.of(classes).stream().map((type) -> selectClass(type)).toList())
			.build();
		SummaryGeneratingListener listener = new SummaryGeneratingListener();
		LauncherFactory.create().execute(request, listener);
		return listener.getSummary();
	}

	private static boolean alive(long pid) {
		return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
	}

	static void report(Class<?> testClass, RedisConnectionFactory connections, ConfigurableApplicationContext context) {
		long pid = Long
			.parseLong(connections.getConnection().serverCommands().info("server").getProperty("process_id"));
		used.put(testClass.getSimpleName(), new Used(pid, context));
	}

	record Used(long pid, ConfigurableApplicationContext context) {
	}

	@SpringBootTest(classes = ShopApplication.class)
	@TestRedis
	static class FirstClass {

		@Test
		void usesItsServer(@Autowired RedisConnectionFactory connections,
				@Autowired ConfigurableApplicationContext context) {
			report(FirstClass.class, connections, context);
		}

	}

	@SpringBootTest(classes = ShopApplication.class)
	@TestRedis
	static class SecondClass {

		@Test
		void usesItsServer(@Autowired RedisConnectionFactory connections,
				@Autowired ConfigurableApplicationContext context) {
			report(SecondClass.class, connections, context);
		}

	}

	@SpringBootTest(classes = ShopApplication.class)
	@TestRedis
	static class Enclosing {

		@Test
		void usesItsServer(@Autowired RedisConnectionFactory connections,
				@Autowired ConfigurableApplicationContext context) {
			report(Enclosing.class, connections, context);
		}

		@Nested
		class Inner {

			@Test
			void usesTheEnclosingServer(@Autowired RedisConnectionFactory connections,
					@Autowired ConfigurableApplicationContext context) {
				report(Inner.class, connections, context);
			}

		}

	}

	@SpringBootTest(classes = ShopApplication.class)
	@TestRedis(arguments = { "--maxmemory", "lots" })
	static class BadArguments {

		@Test
		void neverRuns() {
		}

	}

	@SpringBootTest(classes = ShopApplication.class)
	@TestRedis
	@LocalLocks
	static class BothAnnotations {

		@Test
		void neverRuns() {
		}

	}

}
