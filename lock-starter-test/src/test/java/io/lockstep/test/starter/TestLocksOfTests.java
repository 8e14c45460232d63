package io.lockstep.test.starter;

import java.time.Duration;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.autoconfigure.LockstepAutoConfiguration;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.support.TestLocks;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link TestLocks#of} on contexts that the Spring TestContext framework did not create
 * ({@code ApplicationContextRunner}): clearing on Redis and JVM-local, and the refusals.
 */
@RedisTest
class TestLocksOfTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@Test
	void clearDeletesTheKeysOfAPrefixWithGlobCharactersAndNothingElse(RedisNode redis) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port(), "lockstep.key-prefix=t*[1]:")
			.run((context) -> {
				StringRedisTemplate strings = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
				// matched by the prefix as an unescaped glob: t*[1]:*
				strings.opsForValue().set("t-x1:other", "not a lock");
				LockHandle held = context.getBean(LockTemplate.class).acquire("order:1");
				assertThat(strings.hasKey("t*[1]:order:1")).isTrue();

				assertThat(TestLocks.of(context).clear()).isEqualTo(1);

				assertThat(strings.hasKey("t*[1]:order:1")).isFalse();
				assertThat(strings.hasKey("t-x1:other")).isTrue();
				assertThat(TestLocks.of(context).calls()).isEmpty();
				// a holder still running when the keys are deleted has lost its lease
				assertThatExceptionOfType(LockLostException.class).isThrownBy(held::close);
			});
	}

	@Test
	void clearEmptiesTheJvmLocalStore() {
		this.contextRunner.withPropertyValues("lockstep.enabled=false").run((context) -> {
			LockTemplate locks = context.getBean(LockTemplate.class);
			locks.withMinHoldTime(Duration.ofSeconds(30)).acquire("job").close();
			assertThat(locks.isLocked("job")).isTrue();
			assertThat(TestLocks.of(context).clear()).isEqualTo(1);
			assertThat(locks.isLocked("job")).isFalse();
		});
	}

	@Test
	void clearRefusesRedlockAndAContextWithoutLocks() {
		this.contextRunner
			.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3")
			.run((context) -> assertThatIllegalStateException().isThrownBy(() -> TestLocks.of(context).clear())
				.withMessageContaining("lockstep.redlock.nodes lists Redlock nodes"));
		new ApplicationContextRunner()
			.run((context) -> assertThatIllegalStateException().isThrownBy(() -> TestLocks.of(context).clear())
				.withMessage("TestLocks.clear(): the application context has no single LockTemplate bean to clear"));
	}

}
