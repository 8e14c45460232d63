package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * An application on Spring Data Valkey ({@code spring.data.valkey.*}) points Lockstep at
 * its server with two {@code spring.data.redis.*} lines that repeat its own settings, on
 * one server and behind Sentinel with the replica check. The fixture's server is what
 * {@code lockstep.test.redis-server} names: {@code .ci/run}'s Valkey group runs this on
 * {@code valkey-server} 8.0.1 (each test prints the server it ran); Spring Data Valkey
 * itself is not on the classpath, its properties are plain keys here.
 */
@RedisTest
class SpringDataValkeyApplicationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withPropertyValues("lockstep.lease-time=10s", "lockstep.command-timeout=3s");

	@Test
	void springDataRedisPropertiesThatRepeatTheValkeySettingsPointLockstepAtTheValkeyServer(RedisFixture fixture) {
		RedisNode server = fixture.standalone();
		this.contextRunner.withPropertyValues(
				// the application's own settings, for Spring Data Valkey
				"spring.data.valkey.host=127.0.0.1", "spring.data.valkey.port=" + server.port(),
				// what it adds for Lockstep
				"spring.data.redis.host=${spring.data.valkey.host}",
				"spring.data.redis.port=${spring.data.valkey.port}")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = warmedUp(context.getBean(LockTemplate.class));
				long token;
				try (LockHandle lock = locks.acquire("order:42")) {
					token = lock.fencingToken();
					assertThat(server.call("EXISTS", "lockstep:order:42")).as("the lock is on that server")
						.isEqualTo(1L);
				}
				assertThat(server.call("EXISTS", "lockstep:order:42")).isEqualTo(0L);
				System.out.printf("spring.data.redis.* from spring.data.valkey.*: locked on %s (port %d), token %d%n",
						server.server(), server.port(), token);
				assertThat(token).isPositive();
			});
	}

	/**
	 * Two replicas and three sentinels of the fixture's server; the replica check
	 * ({@code lockstep.replication.acknowledgements=1}) confirms each acquisition on a
	 * replica; after the master is killed, the sentinels promote a replica, the remaining
	 * one confirms acquisitions on it, and with that one paused an acquisition is
	 * refused.
	 */
	@Test
	void behindSentinelsTheReplicaCheckConfirmsOnAReplicaAndLocksFollowAFailover(RedisFixture fixture) {
		Sentinels sentinels = fixture.sentinels(2, 3);
		String nodes = sentinels.sentinels()
			.stream()
			.map((node) -> node.host() + ":" + node.port())
			.collect(Collectors.joining(","));
		this.contextRunner
			.withPropertyValues("spring.data.valkey.sentinel.master=" + Sentinels.MASTER_NAME,
					"spring.data.valkey.sentinel.nodes=" + nodes,
					"spring.data.redis.sentinel.master=${spring.data.valkey.sentinel.master}",
					"spring.data.redis.sentinel.nodes=${spring.data.valkey.sentinel.nodes}",
					"lockstep.replication.acknowledgements=1", "lockstep.replication.timeout=500ms")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = warmedUp(context.getBean(LockTemplate.class));
				try (LockHandle lock = locks.acquire("before")) {
					assertThat(lock.isHeld()).isTrue();
					// WAIT returned only once a replica had the grant
					assertThat(sentinels.replicas()).as("replicas holding the grant")
						.anyMatch((replica) -> Long.valueOf(1).equals(replica.call("EXISTS", "lockstep:before")));
				}
				int oldMaster = sentinels.master().port();
				long killed = System.nanoTime();
				sentinels.master().kill();
				await("a sentinel reports a promoted replica within 30 s").atMost(Duration.ofSeconds(30))
					.until(() -> sentinels.currentMasterPort() != oldMaster);
				int promotedPort = sentinels.currentMasterPort();
				RedisNode promoted = sentinels.replicas()
					.stream()
					.filter((replica) -> replica.port() == promotedPort)
					.findFirst()
					.orElseThrow();
				RedisNode remaining = sentinels.replicas()
					.stream()
					.filter((replica) -> replica != promoted)
					.findFirst()
					.orElseThrow();
				// a call made again after a failure, as an application's retry would
				List<String> failures = new ArrayList<>();
				LockHandle after = null;
				while (after == null && System.nanoTime() - killed < Duration.ofSeconds(40).toNanos()) {
					try {
						after = locks.acquire("after");
					}
					catch (LockException ex) {
						failures.add(ex.getClass().getSimpleName());
					}
				}
				long lockedMillis = (System.nanoTime() - killed) / 1_000_000;
				assertThat(after).as("locked again within 40 s of the kill (failures: %s)", failures).isNotNull();
				try (LockHandle held = after) {
					assertThat(promoted.call("EXISTS", "lockstep:after")).as("on the promoted replica").isEqualTo(1L);
					assertThat(remaining.call("EXISTS", "lockstep:after")).as("confirmed by the remaining one")
						.isEqualTo(1L);
				}
				remaining.pause();
				try {
					assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> locks.withWaitTime(Duration.ZERO).tryAcquire("unconfirmed"))
						.withMessageContaining("replica");
				}
				finally {
					remaining.resume();
				}
				System.out
					.printf("Sentinel on %s: replica check confirmed on a replica; master killed, locked again on the "
							+ "promoted replica %d ms later after %d failed call(s); refused while its replica "
							+ "was paused%n", promoted.server(), lockedMillis, failures.size());
			});
	}

	/**
	 * The template once its first lock went through: the first command connects and loads
	 * the scripts, which can take longer than a command timeout on a loaded machine.
	 */
	private static LockTemplate warmedUp(LockTemplate template) {
		LockTemplate locks = template.withWaitTime(Duration.ofSeconds(10));
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (true) {
			try {
				locks.execute("warm-up", (lock) -> null);
				return locks;
			}
			catch (LockException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
			}
		}
	}

}
