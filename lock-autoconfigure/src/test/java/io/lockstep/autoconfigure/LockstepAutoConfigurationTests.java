package io.lockstep.autoconfigure;

import java.time.Duration;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockCallback;
import io.lockstep.LockHandle;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.interceptor.DistributedLockAdvisor;
import io.lockstep.interceptor.HeldLocksTransactionListener;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link LockstepAutoConfiguration}.
 */
@RedisTest
class LockstepAutoConfigurationTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@Test
	void defaultBeansArePresent() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(RedisLockTemplate.class)
				.hasSingleBean(LockTemplate.class)
				.hasSingleBean(DistributedLockAdvisor.class)
				.hasSingleBean(HeldLocksTransactionListener.class)
				.hasSingleBean(LockstepProperties.class);
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder())
				.isEqualTo(Ordered.LOWEST_PRECEDENCE - 100);
			LockTemplate locks = context.getBean(LockTemplate.class);
			assertThat(locks.execute("default-beans", LockHandle::key)).isEqualTo("lockstep:default-beans");
		});
	}

	@Test
	void backsOffWhenTheUserDefinesALockTemplate() {
		this.contextRunner.withUserConfiguration(UserLockTemplateConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(LockTemplate.class).doesNotHaveBean(RedisLockTemplate.class);
			assertThat(context.getBean(LockTemplate.class)).isSameAs(UserLockTemplateConfiguration.template);
			assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
		});
	}

	@Test
	void backsOffWhenTheUserDefinesTheAdvisor() {
		this.contextRunner
			.withBean("myAdvisor", DistributedLockAdvisor.class,
					() -> new DistributedLockAdvisor(() -> UserLockTemplateConfiguration.template))
			.run((context) -> assertThat(context).hasSingleBean(DistributedLockAdvisor.class).hasBean("myAdvisor"));
	}

	@Test
	void nothingWithoutARedisConnectionFactory() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockTemplate.class)
				.doesNotHaveBean(DistributedLockAdvisor.class)
				.doesNotHaveBean(HeldLocksTransactionListener.class)
				.doesNotHaveBean(LockstepProperties.class));
	}

	@Test
	void disabledByPropertyGivesJvmLocalLocks() {
		this.contextRunner.withPropertyValues("lockstep.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(io.lockstep.local.LocalLockTemplate.class)
				.doesNotHaveBean(RedisLockTemplate.class)
				.hasSingleBean(DistributedLockAdvisor.class)
				.hasSingleBean(HeldLocksTransactionListener.class));
	}

	@Test
	void bindsProperties() {
		this.contextRunner
			.withPropertyValues("lockstep.key-prefix=shop:", "lockstep.wait-time=3s", "lockstep.lease-time=45s",
					"lockstep.aspect-order=7", "lockstep.max-hold-time=10m", "lockstep.on-lease-lost=interrupt",
					"lockstep.locks.orders.wait-time=150ms", "lockstep.locks.orders.lease-time=1m",
					"lockstep.locks.reports.lease-time=2h")
			.run((context) -> {
				LockstepProperties properties = context.getBean(LockstepProperties.class);
				assertThat(properties.getKeyPrefix()).isEqualTo("shop:");
				assertThat(properties.getWaitTime()).isEqualTo(Duration.ofSeconds(3));
				assertThat(properties.getLeaseTime()).isEqualTo(Duration.ofSeconds(45));
				assertThat(properties.getAspectOrder()).isEqualTo(7);
				assertThat(properties.getMaxHoldTime()).isEqualTo(Duration.ofMinutes(10));
				assertThat(properties.getOnLeaseLost()).isEqualTo(LockstepProperties.OnLeaseLost.INTERRUPT);
				assertThat(properties.getLocks()).containsOnlyKeys("orders", "reports");
				assertThat(properties.getLocks().get("orders").getWaitTime()).isEqualTo(Duration.ofMillis(150));
				assertThat(properties.getLocks().get("orders").getLeaseTime()).isEqualTo(Duration.ofMinutes(1));
				assertThat(properties.getLocks().get("reports").getWaitTime()).isNull();
				assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(7);
			});
	}

	@Test
	void appliesKeyPrefixAndPerLockOverrides() {
		this.contextRunner
			.withPropertyValues("lockstep.key-prefix=shop:", "lockstep.wait-time=20s",
					"lockstep.locks.orders.wait-time=150ms")
			.run((context) -> {
				LockTemplate locks = context.getBean(LockTemplate.class);
				try (OtherThread other = new OtherThread();
						LockHandle held = other.call(() -> locks.named("orders").acquire("42"))) {
					assertThat(held.key()).isEqualTo("shop:orders:42");
					long start = System.nanoTime();
					assertThatExceptionOfType(LockAcquisitionException.class)
						.isThrownBy(() -> locks.named("orders").acquire("42"));
					assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(150),
							Duration.ofSeconds(5));
				}
			});
	}

	/**
	 * {@code lockstep.lock-delay} and {@code lockstep.locks.<name>.lock-delay} are stored
	 * with each grant: a key lives its lease plus the delay in Redis.
	 */
	@Test
	void appliesTheLockDelayAndItsPerNameOverride(RedisNode redis) {
		this.contextRunner.withPropertyValues("lockstep.lock-delay=5s", "lockstep.locks.jobs.lock-delay=20s")
			.run((context) -> {
				LockTemplate locks = context.getBean(LockTemplate.class).withLeaseTime(Duration.ofSeconds(1));
				try (LockHandle plain = locks.acquire("delayed");
						LockHandle named = locks.named("jobs").acquire("nightly")) {
					long plainTtl = (Long) redis.call("PTTL", "lockstep:delayed");
					long namedTtl = (Long) redis.call("PTTL", "lockstep:jobs:nightly");
					System.out.printf("lock delay: a 1 s lease lives %d ms (lockstep.lock-delay=5s), %d ms "
							+ "(lockstep.locks.jobs.lock-delay=20s)%n", plainTtl, namedTtl);
					assertThat(plainTtl).isBetween(5_000L, 6_000L);
					assertThat(namedTtl).isBetween(20_000L, 21_000L);
				}
			});
	}

	@Test
	void fewerThanThreeRedlockNodesFailStartUpNamingTheProperty() {
		this.contextRunner.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("lockstep.redlock.nodes must list at least 3 independent Redis masters")
				.hasMessageContaining("got 2"));
	}

	@Test
	void startsWithoutActuatorAndMicrometer() {
		this.contextRunner
			.withClassLoader(new FilteredClassLoader("io.micrometer", "org.springframework.boot.actuate",
					"org.springframework.boot.health"))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class);
				assertThat(context.getBean(LockTemplate.class).tryExecute("no-metrics", LockHandle::key))
					.contains("lockstep:no-metrics");
			});
	}

	@Test
	void publishesLockLostEventsToTheApplicationContext() {
		this.contextRunner.withUserConfiguration(LostLeaseListenerConfiguration.class).run((context) -> {
			LostLeases lost = context.getBean(LostLeases.class);
			LockHandle handle = context.getBean(LockTemplate.class)
				.withLeaseTime(Duration.ofMillis(100))
				.acquire("lost-event");
			assertThat(lost.latch.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(lost.event.get().getKey()).isEqualTo("lockstep:lost-event");
			assertThat(lost.event.get().getFencingToken()).isEqualTo(handle.fencingToken());
			assertThat(handle.isHeld()).isFalse();
			assertThatExceptionOfType(LockLostException.class).isThrownBy(handle::close);
		});
	}

	@Test
	void lockTemplateIsClosedWithTheContext() {
		this.contextRunner.run((context) -> {
			LockTemplate locks = context.getBean(LockTemplate.class);
			assertThat(locks.isLocked("closed")).isFalse();
			((ConfigurableApplicationContext) context.getSourceApplicationContext()).close();
			assertThatException().isThrownBy(() -> locks.isLocked("closed"));
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserLockTemplateConfiguration {

		static final LockTemplate template = new NoOpLockTemplate();

		@Bean
		LockTemplate myLockTemplate() {
			return template;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LostLeaseListenerConfiguration {

		@Bean
		LostLeases lostLeases() {
			return new LostLeases();
		}

	}

	static class LostLeases implements ApplicationListener<LockLostEvent> {

		final CountDownLatch latch = new CountDownLatch(1);

		final AtomicReference<LockLostEvent> event = new AtomicReference<>();

		@Override
		public void onApplicationEvent(LockLostEvent event) {
			this.event.set(event);
			this.latch.countDown();
		}

	}

	/** A user's own template: never locks anything. */
	static class NoOpLockTemplate implements LockTemplate {

		@Override
		public <T> T execute(String key, LockCallback<T> callback) {
			return callback.doInLock(null);
		}

		@Override
		public <T> T executeAll(java.util.Collection<String> keys, LockCallback<T> callback) {
			return callback.doInLock(null);
		}

		@Override
		public <T> Optional<T> tryExecute(String key, LockCallback<T> callback) {
			return Optional.ofNullable(callback.doInLock(null));
		}

		@Override
		public LockHandle acquire(String key) {
			throw new UnsupportedOperationException();
		}

		@Override
		public LockHandle acquireAll(java.util.Collection<String> keys) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Optional<LockHandle> tryAcquire(String key) {
			return Optional.empty();
		}

		@Override
		public java.util.concurrent.locks.Lock asLock(String key) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean isLocked(String key) {
			return false;
		}

		@Override
		public LockTemplate withWaitTime(Duration waitTime) {
			return this;
		}

		@Override
		public LockTemplate withLeaseTime(Duration leaseTime) {
			return this;
		}

		@Override
		public LockTemplate withMinHoldTime(Duration minHoldTime) {
			return this;
		}

		@Override
		public LockTemplate named(String name) {
			return this;
		}

		@Override
		public LockTemplate withLockName(String lockName) {
			return this;
		}

		@Override
		public LockTemplate read() {
			return this;
		}

		@Override
		public LockTemplate write() {
			return this;
		}

		@Override
		public LockTemplate withPermits(int permits) {
			return this;
		}

	}

}
