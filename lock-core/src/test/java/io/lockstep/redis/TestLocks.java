package io.lockstep.redis;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.WorkerJvm;

/**
 * Shared helpers for the lock tests: Lettuce clients on fixture nodes, templates,
 * counting Redis commands, and spawning a second JVM.
 */
final class TestLocks {

	private TestLocks() {
	}

	/**
	 * A client on the node whose first connection is made already: that starts the
	 * client's event loops, which can take longer on a loaded machine than the short
	 * command timeouts of the tests, and a lock's call that fails is not retried.
	 */
	static RedisClient client(RedisNode node) {
		RedisClient client = RedisClient.create(RedisURI.create(node.host(), node.port()));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().ping();
		}
		catch (RuntimeException ex) {
			// Redis is down: nothing to warm up
		}
		return client;
	}

	static RedisLockTemplateBuilder builder(RedisClient client) {
		return RedisLockTemplate.builder(client);
	}

	/** A template with the lease time and command timeout, defaults otherwise. */
	static RedisLockTemplate template(RedisClient client, Duration leaseTime, Duration commandTimeout) {
		return builder(client).leaseTime(leaseTime).commandTimeout(commandTimeout).build();
	}

	/**
	 * Total calls of every command but INFO (which this counting sends) and a
	 * connection's handshake ({@code HELLO}, {@code CLIENT ...}, the {@code PING} a store
	 * connects with as it is built, in the background), from {@code INFO commandstats}.
	 */
	static long commandCalls(RedisNode node) {
		long total = 0;
		for (Map.Entry<String, String> entry : node.info("commandstats").entrySet()) {
			String command = entry.getKey();
			if (command.startsWith("cmdstat_") && !command.equals("cmdstat_info") && !command.equals("cmdstat_hello")
					&& !command.equals("cmdstat_ping") && !command.startsWith("cmdstat_client")) {
				String calls = entry.getValue().split(",")[0];
				total += Long.parseLong(calls.substring(calls.indexOf('=') + 1));
			}
		}
		return total;
	}

	/** Calls of one command, e.g. {@code evalsha}. */
	static long commandCalls(RedisNode node, String command) {
		String stat = node.info("commandstats").get("cmdstat_" + command);
		if (stat == null) {
			return 0;
		}
		String calls = stat.split(",")[0];
		return Long.parseLong(calls.substring(calls.indexOf('=') + 1));
	}

	/** Whether the key exists on the node now. */
	static boolean exists(RedisNode node, String key) {
		return ((Long) node.call("EXISTS", key)) == 1L;
	}

	/** Releases the lock, ignoring a lost or unreachable lease. */
	static void closeQuietly(LockHandle lock) {
		try {
			lock.close();
		}
		catch (LockException ex) {
			// lost or unreachable: not what the test checks
		}
	}

	/**
	 * Like {@link Eventually#holds}; kept for the script tests that call it (new tests
	 * use Awaitility, or {@code Eventually} for a check reported before it is asserted).
	 */
	static boolean eventually(Duration timeout, BooleanSupplier condition) {
		return Eventually.holds(timeout, condition);
	}

	/**
	 * Waits until the thread has been parked (waiting, not running) without a break for
	 * {@code quiet}: a thread waiting for a lock, not one in a Redis round trip.
	 */
	static boolean parkedFor(Thread thread, Duration quiet, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		long since = -1;
		while (System.nanoTime() < deadline && thread.isAlive()) {
			Thread.State state = thread.getState();
			long now = System.nanoTime();
			if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
				if (since < 0) {
					since = now;
				}
				else if (now - since >= quiet.toNanos()) {
					return true;
				}
			}
			else {
				since = -1;
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
		}
		return false;
	}

	/**
	 * Connects each template and loads its scripts with one acquire and release of a key
	 * of its own, called again for up to 30 s (a first connection can be slower than the
	 * command timeout on a loaded machine, and a failed call is not retried by the lock),
	 * so that the timing a test measures afterwards is not the start-up's.
	 */
	static void warmUp(RedisLockTemplate... templates) {
		for (RedisLockTemplate template : templates) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (true) {
				try {
					template.withWaitTime(Duration.ofSeconds(30)).acquire("warm-up").close();
					break;
				}
				catch (LockException ex) {
					if (System.nanoTime() - deadline > 0) {
						throw ex;
					}
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // a retry
																				// delay
				}
			}
		}
	}

	/** A second JVM running {@link LockWorker} with the test classpath. */
	static WorkerJvm worker(String... args) {
		return new WorkerJvm(LockWorker.class, args);
	}

}
