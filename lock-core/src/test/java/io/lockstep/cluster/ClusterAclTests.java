package io.lockstep.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.internal.redis.SlotTags;
import io.lockstep.redis.AclRecipe;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Cluster;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ACL rules of docs/redis-acl.md for a Cluster (the standalone ones plus the Cluster
 * additions) are enough on a 3-master Redis 7 Cluster: a lock over keys in several slots,
 * renewals, a waiter woken by a sharded notification, release.
 */
@RedisTest
class ClusterAclTests {

	/**
	 * The rules of docs/redis-acl.md, read from that page: the standalone ones and the
	 * Cluster additions.
	 */
	static final String[] RULES = Stream.concat(AclRecipe.rules().stream(), AclRecipe.clusterAdditions().stream())
		.toArray(String[]::new);

	@Test
	void theDocumentedClusterRulesAreEnough(RedisFixture fixture) throws Exception {
		Cluster cluster = fixture.cluster(3, 0);
		// the rules name Redis 7 commands: the server says whether it knows them (Valkey
		// 8 reports redis_version:7.2.4, so its version string would prove nothing)
		List<String> unknown = Stream.of(RULES)
			.filter((rule) -> rule.startsWith("+") && !rule.contains("|") && !rule.startsWith("+@"))
			.map((rule) -> rule.substring(1))
			.filter((command) -> !cluster.masters().get(0).hasCommand(command))
			.toList();
		if (!unknown.isEmpty()) {
			System.out.printf("NOTE: the Cluster ACL rules are NOT tested in this run: %s does not know %s%n",
					cluster.masters().get(0).server(), unknown);
			return;
		}
		System.out.printf("The Cluster ACL rules of docs/redis-acl.md on %s: %s%n", cluster.masters().get(0).server(),
				String.join(" ", RULES));
		for (RedisNode node : cluster.masters()) {
			List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", "locker", "on", ">secret"));
			command.addAll(List.of(RULES));
			assertThat(node.call(command.toArray(String[]::new))).isEqualTo("OK");
		}
		RedisClusterClient first = client(cluster);
		RedisClusterClient second = client(cluster);
		try (RedisLockTemplate a = RedisLockTemplate.builder(first)
			.leaseTime(Duration.ofMillis(900))
			.commandTimeout(Duration.ofMillis(300))
			.build();
				RedisLockTemplate b = RedisLockTemplate.builder(second)
					.leaseTime(Duration.ofMillis(900))
					.commandTimeout(Duration.ofMillis(300))
					.build()) {
			List<String> keys = List.of("acl:1", "acl:2", "acl:3", "acl:4", "acl:5", "acl:6");
			LockHandle held = a.acquireAll(keys);
			CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = b.withWaitTime(Duration.ofSeconds(10)).acquire("acl:3")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(b).keysWaitedFor() == 1);
			Eventually.holds(Duration.ofMillis(1_500), () -> false); // renewed at least
																		// three times
			assertThat(held.isHeld()).isTrue();
			long released = System.nanoTime();
			held.close();
			long wokenMillis = (waiter.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			long slots = keys.stream().map((key) -> SlotTags.slot("lockstep:" + key)).distinct().count();
			System.out.printf(
					"cluster ACL user: %d keys in %d slots acquired, renewed, released; waiter woken after "
							+ "%d ms (notifications %s); leases lost %d%n",
					keys.size(), slots, wokenMillis, Probes.engine(b).wakeUps().notifies() ? "on" : "off",
					a.leasesLost() + b.leasesLost());
			assertThat(Probes.engine(b).wakeUps().notifies()).isTrue();
			assertThat(wokenMillis).isLessThan(250);
			assertThat(a.leasesLost() + b.leasesLost()).isZero();
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	/**
	 * A client of the ACL user with its first connection made (topology read, event loops
	 * started), which can take longer on a loaded machine than the 300 ms command
	 * timeout, and a lock's call that fails is not retried.
	 */
	private static RedisClusterClient client(Cluster cluster) {
		RedisClusterClient client = RedisClusterClient.create(RedisURI.builder()
			.withHost("127.0.0.1")
			.withPort(cluster.masters().get(0).port())
			.withAuthentication("locker", "secret".toCharArray())
			.build());
		try (var connection = client.connect()) {
			connection.sync().ping();
		}
		return client;
	}

}
