package io.lockstep.redis;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read/write locks and semaphores behind Sentinel and on a Cluster, from two JVMs:
 * readers share, writers exclude, a semaphore admits at most its permits, counted in a
 * separate ledger Redis (on a Cluster, every script of a shared lock runs on the node of
 * the lock's slot: a script over keys of two slots would fail).
 */
@RedisTest
class SharedTopologyTests {

	private static final Pattern RESULT = Pattern
		.compile("RESULT violations=(\\d+) reused=(\\d+) done=(\\d+) most=(\\d+)");

	@Test
	void behindSentinel(RedisFixture fixture) throws Exception {
		Sentinels sentinels = fixture.sentinels(1, 3);
		RedisClient client = sentinelClient(sentinels);
		try {
			contend(fixture, "sentinel", client, "sentinel:" + String.join(",",
					sentinels.sentinels().stream().map((node) -> Integer.toString(node.port())).toList()));
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void onACluster(RedisFixture fixture) throws Exception {
		Cluster cluster = fixture.cluster(3, 0);
		RedisClusterClient client = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(0).port()));
		try {
			contend(fixture, "cluster", client, "cluster:" + cluster.masters().get(1).port());
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * Read/write contention then semaphore contention: this JVM and a second one
	 * ({@code other} tells it where the locks are, see {@link LockWorker}), 4 threads x
	 * 1,250 acquisitions each.
	 */
	private void contend(RedisFixture fixture, String topology, AbstractRedisClient client, String other)
			throws Exception {
		RedisNode ledgerNode = fixture.standalone();
		RedisClient ledgerClient = TestLocks.client(ledgerNode);
		try (RedisLockTemplate locks = template(client)) {
			RedisCommands<String, String> ledger = ledgerClient.connect().sync();
			long[] rw = run(locks, other, ledgerNode, ledger, "doc:1", "rw");
			System.out.printf(
					"%s on %s: read/write, 2 JVMs x 4 threads: %d acquisitions, %d writer overlaps, %d fencing "
							+ "violations, most readers inside at once %d%n",
					topology, fixture.redisVersion(), rw[2], rw[0], rw[1], rw[3]);
			long[] sem = run(locks, other, ledgerNode, ledger, "export:1", "sem:3");
			System.out.printf(
					"%s on %s: semaphore of 3, 2 JVMs x 4 threads: %d acquisitions, %d times more than 3 inside, "
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

	/** {violations, reused tokens, done, most inside} over both JVMs. */
	private static long[] run(RedisLockTemplate locks, String other, RedisNode ledgerNode,
			RedisCommands<String, String> ledger, String key, String mode) throws Exception {
		try (WorkerJvm worker = TestLocks.worker("contend-shared", other, Integer.toString(ledgerNode.port()), key, "4",
				"1250", mode)) {
			worker.await("READY", Duration.ofSeconds(60));
			SharedContention contention = new SharedContention(locks, ledger, key, SharedContention.permitsOf(mode));
			worker.send("GO");
			contention.run(4, 1_250, Duration.ofMinutes(4));
			Matcher remote = RESULT.matcher(worker.await("RESULT", Duration.ofMinutes(4)));
			assertThat(remote.matches()).isTrue();
			return new long[] { contention.violations.get() + Long.parseLong(remote.group(1)),
					contention.reused.get() + Long.parseLong(remote.group(2)),
					contention.done.get() + Long.parseLong(remote.group(3)),
					Math.max(contention.mostInside.get(), Long.parseLong(remote.group(4))) };
		}
	}

	private static RedisLockTemplate template(AbstractRedisClient client) {
		return RedisLockTemplate.builder(client)
			.commandTimeout(Duration.ofSeconds(5))
			.leaseTime(Duration.ofSeconds(15))
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
