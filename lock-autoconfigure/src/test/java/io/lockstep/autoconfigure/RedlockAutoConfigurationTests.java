package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.lockstep.DistributedLock;
import io.lockstep.LockHandle;
import io.lockstep.LockMode;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code lockstep.redlock.*}: Redlock instead of the single master of
 * {@code spring.data.redis.*}, and clear start-up errors naming the property.
 */
@RedisTest
class RedlockAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@Test
	void redlockNodesTurnOnRedlockInsteadOfTheSingleMaster(RedisFixture fixture) {
		RedisNode single = fixture.standalone();
		List<RedisNode> masters = fixture.masters(3, "--appendonly", "yes");
		this.contextRunner
			.withPropertyValues("spring.data.redis.port=" + single.port(),
					"lockstep.redlock.nodes=" + masters.get(0).uri() + "," + masters.get(1).uri() + ","
							+ masters.get(2).uri(),
					"lockstep.redlock.clock-drift-factor=0.02", "lockstep.redlock.node-timeout=300ms")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RedisLockTemplate.class);
				LockstepProperties.Redlock properties = context.getBean(LockstepProperties.class).getRedlock();
				assertThat(properties.getClockDriftFactor()).isEqualTo(0.02);
				assertThat(properties.getNodeTimeout()).isEqualTo(Duration.ofMillis(300));
				RedisLockTemplate locks = context.getBean(RedisLockTemplate.class);
				LockStore backend = EngineTemplate.of(locks).engine().store();
				assertThat(backend.getClass().getSimpleName()).isEqualTo("RedlockStore");
				// 2% of a 1 s lease + 2 ms
				assertThat(backend.driftNanos(Duration.ofSeconds(1).toNanos())).isEqualTo(22_000_000L);
				try (LockHandle lock = locks.acquire("redlock")) {
					// granted once a quorum answered; the last node's SET may still be on
					// its way
					await().atMost(Duration.ofSeconds(2))
						.until(() -> masters.stream()
							.allMatch((node) -> (Long) node.call("EXISTS", "lockstep:redlock") == 1L));
					assertThat(single.call("EXISTS", "lockstep:redlock")).isEqualTo(0L);
					assertThat(lock.isHeld()).isTrue();
				}
			});
	}

	@Test
	void redlockNeedsNoRedisConnectionFactory(RedisFixture fixture) {
		List<RedisNode> masters = fixture.masters(3, "--appendonly", "yes");
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
			.withPropertyValues("lockstep.redlock.nodes[0]=" + masters.get(0).uri(),
					"lockstep.redlock.nodes[1]=" + masters.get(1).uri(),
					"lockstep.redlock.nodes[2]=" + masters.get(2).uri())
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class);
				assertThat(context.getBean(LockTemplate.class).tryExecute("no-factory", LockHandle::key))
					.contains("lockstep:no-factory");
			});
	}

	@Test
	void aReadLockMethodFailsStartUpOnRedlockNamingTheMethod(RedisFixture fixture) {
		assertRedlockRefuses(fixture, Catalog.class, "read(String)", "mode = READ cannot be honoured");
	}

	@Test
	void aSemaphoreMethodFailsStartUpOnRedlockNamingTheMethod(RedisFixture fixture) {
		assertRedlockRefuses(fixture, Exports.class, "run()", "permits = 3 cannot be honoured");
	}

	@Test
	void everyMethodRedlockCannotHonourIsNamedInOneStartUpFailure(RedisFixture fixture) {
		List<RedisNode> masters = fixture.masters(3, "--appendonly", "yes");
		this.contextRunner.withBean(Catalog.class)
			.withBean(Exports.class)
			.withPropertyValues("lockstep.redlock.nodes=" + masters.get(0).uri() + "," + masters.get(1).uri() + ","
					+ masters.get(2).uri())
			.run((context) -> {
				FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
				System.out.printf("Two refused methods:%n%s%n", analysis.getDescription());
				assertThat(analysis.getDescription()).startsWith("2 @DistributedLock methods ask for what Redlock")
					.contains("@DistributedLock on " + Catalog.class.getName() + ".read(String): mode = READ")
					.contains("@DistributedLock on " + Exports.class.getName() + ".run(): permits = 3");
				assertThat(analysis.getAction()).contains("mode = WRITE, permits = 1");
			});
	}

	private void assertRedlockRefuses(RedisFixture fixture, Class<?> bean, String method, String attribute) {
		List<RedisNode> masters = fixture.masters(3, "--appendonly", "yes");
		this.contextRunner.withBean(bean)
			.withPropertyValues("lockstep.redlock.nodes=" + masters.get(0).uri() + "," + masters.get(1).uri() + ","
					+ masters.get(2).uri())
			.run((context) -> {
				FailureAnalysis analysis = new LockstepFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
				assertThat(analysis.getDescription())
					.startsWith("@DistributedLock on " + bean.getName() + "." + method + ": " + attribute)
					.contains("Redlock supports exclusive locks only");
				assertThat(analysis.getAction()).contains("mode = WRITE, permits = 1")
					.contains("a single Redis master, Sentinel or Cluster");
			});
	}

	@Test
	void aNodeThatIsNotARedisUriFailsStartUpNamingTheProperty() {
		this.contextRunner
			.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,http://nowhere")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("lockstep.redlock.nodes[2] is not a Redis URI"));
	}

	@Test
	void aNodeListedTwiceFailsStartUpNamingTheProperty() {
		this.contextRunner
			.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("lockstep.redlock.nodes")
				.hasMessageContaining("redis://127.0.0.1:1 is listed twice"));
	}

	@Test
	void aClockDriftFactorOutOfRangeFailsStartUpNamingTheProperty() {
		this.contextRunner
			.withPropertyValues("lockstep.redlock.nodes=redis://127.0.0.1:1,redis://127.0.0.1:2,redis://127.0.0.1:3",
					"lockstep.redlock.clock-drift-factor=2")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("lockstep.redlock.clock-drift-factor must be between 0 and 0.5"));
	}

	@Test
	void withoutRedlockNodesTheSingleMasterIsUsed(RedisNode single) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + single.port()).run((context) -> {
			LockStore backend = EngineTemplate.of(context.getBean(RedisLockTemplate.class)).engine().store();
			assertThat(backend.getClass().getSimpleName()).isEqualTo("RedisStore");
		});
	}

	static class Catalog {

		@DistributedLock(key = "#sku", mode = LockMode.READ)
		String read(String sku) {
			return sku;
		}

	}

	static class Exports {

		@DistributedLock(key = "'export'", permits = 3)
		void run() {
		}

	}

}
