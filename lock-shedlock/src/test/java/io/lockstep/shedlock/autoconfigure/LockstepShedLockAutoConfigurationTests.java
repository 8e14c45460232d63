package io.lockstep.shedlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.lockstep.LockTemplate;
import io.lockstep.autoconfigure.LockstepAutoConfiguration;
import io.lockstep.local.LocalLockTemplate;
import io.lockstep.shedlock.LockstepLockProvider;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link LockstepShedLockAutoConfiguration}.
 */
@RedisTest
class LockstepShedLockAutoConfigurationTests {

	private static final LockProvider USERS_PROVIDER = (configuration) -> Optional.empty();

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class,
				LockstepShedLockAutoConfiguration.class));

	private RedisNode redis;

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redis = redis;
		// a first lock of a context connects first: room for that on a loaded machine
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port(),
				"lockstep.command-timeout=5s");
	}

	@Test
	void aProviderOnTheApplicationsLockTemplate() {
		this.contextRunner.withPropertyValues("lockstep.key-prefix=shop:").run((context) -> {
			assertThat(context).hasSingleBean(LockProvider.class).hasSingleBean(LockstepLockProvider.class);
			SimpleLock lock = context.getBean(LockProvider.class).lock(config("nightly-report")).orElseThrow();
			assertThat((Long) this.redis.call("PTTL", "shop:shedlock:nightly-report")).isBetween(1L, 60_000L);
			lock.unlock();
			assertThat((Long) this.redis.call("PTTL", "shop:shedlock:nightly-report")).isEqualTo(-2);
		});
	}

	@Test
	void maxHoldTimeCapsShedLocksDurations() {
		this.contextRunner.withPropertyValues("lockstep.max-hold-time=1s").run((context) -> {
			LockProvider provider = context.getBean(LockProvider.class);
			SimpleLock lock = provider
				.lock(new LockConfiguration(Instant.now(), "capped", Duration.ofMinutes(10), Duration.ofMinutes(5)))
				.orElseThrow();
			lock.unlock();
			assertThat((Long) this.redis.call("PTTL", "lockstep:shedlock:capped")).isBetween(1L, 1000L);
		});
	}

	@Test
	void backsOffFromALockProviderOfTheApplications() {
		this.contextRunner.withBean("usersLockProvider", LockProvider.class, () -> USERS_PROVIDER)
			.run((context) -> assertThat(context).hasSingleBean(LockProvider.class)
				.doesNotHaveBean(LockstepLockProvider.class)
				.getBean(LockProvider.class)
				.isSameAs(USERS_PROVIDER));
	}

	@Test
	void backsOffWithoutShedLock() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(LockProvider.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(LockstepLockProvider.class));
	}

	@Test
	void nothingWithoutALockTemplate() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(LockstepAutoConfiguration.class, LockstepShedLockAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockTemplate.class)
				.doesNotHaveBean(LockProvider.class));
	}

	@Test
	void withLockstepDisabledTheProviderLocksInTheJvm() {
		this.contextRunner.withPropertyValues("lockstep.enabled=false").run((context) -> {
			assertThat(context).hasSingleBean(LocalLockTemplate.class).hasSingleBean(LockstepLockProvider.class);
			LockProvider provider = context.getBean(LockProvider.class);
			SimpleLock lock = provider.lock(config("local")).orElseThrow();
			assertThat(provider.lock(config("local"))).isEmpty();
			lock.unlock();
			assertThat((Long) this.redis.call("EXISTS", "lockstep:shedlock:local")).isZero();
		});
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(LockstepShedLockAutoConfiguration.class.getName());
	}

	private static LockConfiguration config(String name) {
		return new LockConfiguration(Instant.now(), name, Duration.ofMinutes(1), Duration.ZERO);
	}

}
