package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.function.Supplier;

import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application's first lock after start-up does not pay for connecting the lock client
 * within its command timeout: the context connects it while it starts
 * ({@link LockClientWarmUp}). Prints what a cold first call costs on a client that was
 * not warmed up (connection, script load, the JVM's first use of the code) next to the
 * first call of an application context, most telling when run alone, in a fresh JVM.
 */
@RedisTest
class FirstLockAfterStartUpTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@Test
	void theFirstLockAfterStartUpDoesNotPayForTheConnection(RedisNode redis) {
		// an application context first, in a JVM that has not locked yet
		long beforeStart = System.nanoTime();
		Duration[] application = new Duration[3];
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			application[0] = Duration.ofNanos(System.nanoTime() - beforeStart);
			assertThat(redis.info("clients").get("connected_clients"))
				.as("the lock client connected while the context started, before any lock (the test's own "
						+ "connection and the lock client's); clients: %s", redis.call("CLIENT", "LIST"))
				.isEqualTo("2");
			LockTemplate locks = context.getBean(LockTemplate.class);
			application[1] = timed(() -> locks.execute("first", (lock) -> lock.fencingToken()));
			application[2] = timed(() -> locks.execute("first", (lock) -> lock.fencingToken()));
		});
		// then a client that nothing warmed up: its first lock pays for connecting
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
		factory.afterPropertiesSet();
		Duration coldFirst;
		Duration coldSecond;
		try (RedisLockTemplate cold = RedisLockTemplate.builder(factory)
			.commandTimeout(Duration.ofSeconds(10))
			.build()) {
			coldFirst = timed(() -> cold.execute("cold", (lock) -> lock.fencingToken()));
			coldSecond = timed(() -> cold.execute("cold", (lock) -> lock.fencingToken()));
		}
		finally {
			factory.destroy();
		}
		System.out.printf(
				"an application context: start-up %d ms (connecting included), first lock "
						+ "%d ms, then %d ms (command timeout 2s); then a client not warmed up: first lock %d ms "
						+ "(connecting included), then %d ms%n",
				application[0].toMillis(), application[1].toMillis(), application[2].toMillis(), coldFirst.toMillis(),
				coldSecond.toMillis());
		assertThat(application[1]).as("the first lock after start-up, within the command timeout")
			.isLessThan(Duration.ofSeconds(2));
	}

	private static Duration timed(Supplier<Object> call) {
		long start = System.nanoTime();
		assertThat(call.get()).isNotNull();
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
