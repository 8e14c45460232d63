package io.lockstep.redis;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.Retried;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.Sentinels;

/**
 * The main class of the second JVM in multi-process tests. Modes:
 * <ul>
 * <li>{@code contend <lockPort> <ledgerPort> <key> <threads> <iterations>}: prints
 * {@code READY}, waits for {@code GO} on stdin, runs {@link Contention}, prints
 * {@code RESULT overlaps=.. violations=.. done=..};</li>
 * <li>{@code hold <lockPort> <key> <leaseMillis> [lockDelayMillis]}: acquires with a
 * watchdog lease, prints {@code ACQUIRED <fencingToken>} and parks until killed;</li>
 * <li>{@code wait <lockPort> <key> <leaseMillis>}: prints {@code WAITING}, waits (up to 2
 * minutes) for the lock with a fixed lease, prints {@code ACQUIRED <fencingToken>} and
 * parks until killed;</li>
 * <li>{@code wait-renewed <lockPort> <key> <leaseMillis>}: the same with a watchdog lease
 * (renewed while held).</li>
 * <li>{@code contend-shared <lock> <ledgerPort> <key> <threads> <iterations> <mode>}:
 * like {@code contend} with {@link SharedContention} ({@code mode} {@code rw} or
 * {@code sem:<n>}), on one master, a Cluster or Sentinels ({@link #lockClient}); prints
 * {@code RESULT violations=.. reused=.. done=.. most=..};</li>
 * <li>{@code hold-read <lockPort> <key> <leaseMillis>}: like {@code hold}, as a
 * reader.</li>
 * </ul>
 */
public final class LockWorker {

	/**
	 * The handle a holding worker keeps until it is killed. A handle is the lock's owner:
	 * one that only a local variable of a parked frame refers to is unreachable, and once
	 * it is collected the lock is no longer renewed (a leaked handle).
	 */
	static volatile LockHandle held;

	private LockWorker() {
	}

	/**
	 * {@code hold-redlock <port,port,...> <key> <leaseMillis> <lockDelayMillis>}: like
	 * {@code hold}, on Redlock over those masters.
	 */
	private static void holdOnRedlock(String[] args) {
		java.util.List<RedisURI> nodes = java.util.Arrays.stream(args[1].split(","))
			.map((port) -> RedisURI.create("127.0.0.1", Integer.parseInt(port)))
			.toList();
		long lease = Long.parseLong(args[3]);
		RedisLockTemplate locks = io.lockstep.redlock.Redlock.nodes(nodes)
			.nodeTimeout(Duration.ofMillis(500))
			.builder()
			.leaseTime(Duration.ofMillis(lease))
			.commandTimeout(Duration.ofMillis(lease / 4))
			.lockDelay(Duration.ofMillis(Long.parseLong(args[4])))
			.build();
		held = Retried.call(() -> locks.acquire(args[2]), Duration.ofSeconds(30), Duration.ofMillis(50));
		report("ACQUIRED " + held.fencingToken());
		while (true) {
			LockSupport.park();
		}
	}

	public static void main(String[] args) throws Exception {
		if (args[0].equals("hold-redlock")) {
			holdOnRedlock(args);
			return;
		}
		RedisClient ledgerOfShared = args[0].equals("contend-shared")
				? RedisClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(args[2]))) : null;
		if (ledgerOfShared != null) {
			contendShared(args, lockClient(args[1]), ledgerOfShared);
			return;
		}
		RedisClient lockClient = RedisClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(args[1])));
		if (args[0].equals("wait") || args[0].equals("wait-renewed")) {
			RedisLockTemplate locks = RedisLockTemplate.builder(lockClient)
				.waitTime(Duration.ofMinutes(2))
				.leaseTime(Duration.ofMillis(Long.parseLong(args[3])))
				.commandTimeout(Duration.ofMillis(Math.min(2_000, Long.parseLong(args[3]) / 4)))
				.build();
			report("WAITING");
			held = args[0].equals("wait")
					? Retried.call(
							() -> locks.withLeaseTime(Duration.ofMillis(Long.parseLong(args[3]))).acquire(args[2]),
							Duration.ofSeconds(30), Duration.ofMillis(50))
					: Retried.call(() -> locks.acquire(args[2]), Duration.ofSeconds(30), Duration.ofMillis(50));
			report("ACQUIRED " + held.fencingToken());
			while (true) {
				LockSupport.park();
			}
		}
		if (args[0].equals("hold") || args[0].equals("hold-read")) {
			RedisLockTemplate built = RedisLockTemplate.builder(lockClient)
				.leaseTime(Duration.ofMillis(Long.parseLong(args[3])))
				.commandTimeout(Duration.ofMillis(Long.parseLong(args[3]) / 4))
				.lockDelay(Duration.ofMillis((args.length > 4) ? Long.parseLong(args[4]) : 0))
				.build();
			RedisLockTemplate locks = args[0].equals("hold-read") ? built.read() : built;
			held = Retried.call(() -> locks.acquire(args[2]), Duration.ofSeconds(30), Duration.ofMillis(50));
			report("ACQUIRED " + held.fencingToken());
			while (true) {
				LockSupport.park();
			}
		}
		RedisClient ledgerClient = RedisClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(args[2])));
		try (RedisLockTemplate locks = RedisLockTemplate.builder(lockClient).waitTime(Duration.ofMinutes(2)).build()) {
			Contention contention = new Contention(locks, ledgerClient.connect().sync(), args[3]);
			report("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if (!"GO".equals(in.readLine())) {
				throw new IllegalStateException("expected GO");
			}
			contention.run(Integer.parseInt(args[4]), Integer.parseInt(args[5]), Duration.ofMinutes(5));
			report("RESULT overlaps=" + contention.overlaps + " violations=" + contention.tokenViolations + " done="
					+ contention.done);
		}
		finally {
			ledgerClient.shutdown();
			lockClient.shutdown();
		}
	}

	/**
	 * A client on {@code <port>} (one master), {@code cluster:<port>} (a Cluster node) or
	 * {@code sentinel:<port>,<port>,...} (Sentinels of {@link Sentinels#MASTER_NAME}).
	 */
	private static AbstractRedisClient lockClient(String where) {
		if (where.startsWith("cluster:")) {
			return RedisClusterClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(where.substring(8))));
		}
		if (where.startsWith("sentinel:")) {
			RedisURI.Builder uri = RedisURI.builder();
			for (String port : where.substring(9).split(",")) {
				uri.withSentinel("127.0.0.1", Integer.parseInt(port));
			}
			return RedisClient.create(uri.withSentinelMasterId(Sentinels.MASTER_NAME).build());
		}
		return RedisClient.create(RedisURI.create("127.0.0.1", Integer.parseInt(where)));
	}

	private static void contendShared(String[] args, AbstractRedisClient lockClient, RedisClient ledgerClient)
			throws Exception {
		// a loaded machine may take a while to answer: counting overlaps is the point
		// here
		try (RedisLockTemplate locks = RedisLockTemplate.builder(lockClient)
			.waitTime(Duration.ofMinutes(2))
			.commandTimeout(Duration.ofSeconds(5))
			.build()) {
			SharedContention contention = new SharedContention(locks, ledgerClient.connect().sync(), args[3],
					SharedContention.permitsOf(args[6]));
			report("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if (!"GO".equals(in.readLine())) {
				throw new IllegalStateException("expected GO");
			}
			contention.run(Integer.parseInt(args[4]), Integer.parseInt(args[5]), Duration.ofMinutes(5));
			report("RESULT violations=" + contention.violations + " reused=" + contention.reused + " done="
					+ contention.done + " most=" + contention.mostInside);
		}
		finally {
			ledgerClient.shutdown();
			lockClient.shutdown();
		}
	}

	@SuppressWarnings("java:S106")
	private static void report(String line) {
		System.out.println(line);
		System.out.flush();
	}

}
