package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.test.Cluster;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read/write locks and semaphores behind Sentinel and on a Cluster, from two clients (as
 * two processes would be): readers share, writers exclude, a semaphore admits at most its
 * permits, counted in a separate ledger Redis (on a Cluster, every script of a shared
 * lock runs on the node of the lock's slot: a script over keys of two slots would fail).
 */
@RedisTest
class SharedTopologyTests {

	@Test
	void behindSentinel(RedisFixture fixture) throws Exception {
		Sentinels sentinels = fixture.sentinels(1, 3);
		RedisClient first = sentinelClient(sentinels);
		RedisClient second = sentinelClient(sentinels);
		try {
			contend(fixture, "sentinel", first, second);
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	@Test
	void onACluster(RedisFixture fixture) throws Exception {
		Cluster cluster = fixture.cluster(3, 0);
		RedisClusterClient first = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(0).port()));
		RedisClusterClient second = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(1).port()));
		try {
			contend(fixture, "cluster", first, second);
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	/**
	 * Read/write contention then semaphore contention, 2 clients x 4 threads x 1,250
	 * acquisitions each.
	 */
	private void contend(RedisFixture fixture, String topology, AbstractRedisClient first, AbstractRedisClient second)
			throws Exception {
		RedisNode ledgerNode = fixture.standalone();
		RedisClient ledgerClient = TestLocks.client(ledgerNode);
		try (RedisLockTemplate a = template(first); RedisLockTemplate b = template(second)) {
			RedisCommands<String, String> ledger = ledgerClient.connect().sync();
			long[] rw = run(a, b, ledger, "doc:1", 0);
			System.out.printf(
					"%s on %s: read/write, 2 clients x 4 threads: %d acquisitions, %d writer overlaps, %d fencing "
							+ "violations, most readers inside at once %d%n",
					topology, fixture.redisVersion(), rw[2], rw[0], rw[1], rw[3]);
			long[] sem = run(a, b, ledger, "export:1", 3);
			System.out.printf(
					"%s on %s: semaphore of 3, 2 clients x 4 threads: %d acquisitions, %d times more than 3 inside, "
							+ "%d fencing violations, most inside at once %d%n",
					topology, fixture.redisVersion(), sem[2], sem[0], sem[1], sem[3]);
			assertThat(rw[2]).isEqualTo(10_000);
			assertThat(rw[0]).isZero();
			assertThat(rw[1]).isZero();
			assertThat(rw[3]).isGreaterThanOrEqualTo(2);
			assertThat(sem[2]).isEqualTo(10_000);
			assertThat(sem[0]).isZero();
			assertThat(sem[1]).isZero();
			assertThat(sem[3]).isEqualTo(3);
		}
		finally {
			ledgerClient.shutdown();
		}
	}

	/** {violations, reused tokens, done, most inside} over both clients. */
	private static long[] run(RedisLockTemplate a, RedisLockTemplate b, RedisCommands<String, String> ledger,
			String key, int permits) throws Exception {
		SharedContention one = new SharedContention(a, ledger, key, permits);
		SharedContention two = new SharedContention(b, ledger, key, permits);
		CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
			try {
				two.run(4, 1_250, Duration.ofMinutes(4));
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		one.run(4, 1_250, Duration.ofMinutes(4));
		other.get(4, TimeUnit.MINUTES);
		return new long[] { one.violations.get() + two.violations.get(), one.reused.get() + two.reused.get(),
				one.done.get() + two.done.get(), Math.max(one.mostInside.get(), two.mostInside.get()) };
	}

	private static RedisLockTemplate template(AbstractRedisClient client) {
		return RedisLockTemplate.builder(client)
			.commandTimeout(Duration.ofMillis(1_000))
			.leaseTime(Duration.ofSeconds(3))
			.waitTime(Duration.ofMinutes(2))
			.build();
	}

	private static RedisClient sentinelClient(Sentinels sentinels) {
		RedisURI.Builder uri = RedisURI.builder();
		for (RedisNode sentinel : sentinels.sentinels()) {
			uri.withSentinel(sentinel.host(), sentinel.port());
		}
		return RedisClient.create(uri.withSentinelMasterId(Sentinels.MASTER_NAME).build());
	}

}
