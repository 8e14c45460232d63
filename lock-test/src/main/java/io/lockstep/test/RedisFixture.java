package io.lockstep.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts real {@code redis-server} processes on free {@code 127.0.0.1} ports and stops
 * every one of them, by PID, on {@link #close()}. Use it directly in a try-with-resources
 * block, or let {@link RedisExtension} hand one to a test.
 *
 * <p>
 * Where no {@code redis-server} can be started, every method throws an
 * {@link IllegalStateException} that says why: tests that need Redis fail, never skip.
 */
public final class RedisFixture implements AutoCloseable {

	private static final int START_ATTEMPTS = 5;

	private static final Logger logger = LoggerFactory.getLogger(RedisFixture.class);

	private final List<RedisNode> nodes = new CopyOnWriteArrayList<>();

	private static final AtomicInteger fixtures = new AtomicInteger();

	private final int id = fixtures.incrementAndGet();

	private final Set<RedisBinary> announced = ConcurrentHashMap.newKeySet();

	private volatile RedisBinary binary;

	private volatile String server;

	/**
	 * Starts every later node of this fixture from the Redis 6.2 binary shipped in the
	 * embedded-redis jar, even when another {@code redis-server} is on PATH; for testing
	 * the behaviour that differs between Redis versions.
	 */
	public RedisFixture useEmbeddedRedis() {
		this.binary = RedisBinary.embedded();
		return this;
	}

	/**
	 * The binary later nodes start from: its path, where it was found and its
	 * {@code redis-server --version}.
	 */
	public String redisBinary() {
		RedisBinary current = binary();
		return current.path() + " (" + current.source() + ", " + current.version() + ")";
	}

	/** The {@code redis-server --version} of the binary later nodes start from. */
	public String redisVersion() {
		return binary().version();
	}

	/**
	 * The server this fixture's nodes name themselves in their {@code INFO} (e.g.
	 * {@code valkey-server 8.0.1} or {@code redis-server 7.0.15}), of the binary it
	 * started a node from last; before any node ran, the one the binary's
	 * {@code --version} names.
	 */
	public String server() {
		String current = this.server;
		return (current != null) ? current : binary().server();
	}

	private RedisBinary binary() {
		RedisBinary current = this.binary;
		return (current != null) ? current : RedisBinary.get();
	}

	/**
	 * One standalone node; {@code extraArguments} are redis-server options such as
	 * {@code "--maxmemory", "4mb"}.
	 */
	public RedisNode standalone(String... extraArguments) {
		return start("standalone", null, Arrays.asList(extraArguments));
	}

	/** {@code count} independent masters, as Redlock needs. */
	public List<RedisNode> masters(int count) {
		return masters(count, new String[0]);
	}

	/**
	 * {@code count} independent masters with extra redis-server options, e.g.
	 * {@code "--appendonly", "yes"} for masters that keep their data across a
	 * {@link RedisNode#restart()} (Redlock refuses nodes that do not persist).
	 */
	public List<RedisNode> masters(int count, String... extraArguments) {
		logger.info("{} independent masters from {}", count, redisBinary());
		List<RedisNode> masters = new ArrayList<>(count);
		for (int i = 1; i <= count; i++) {
			masters.add(start("master-" + i, null, Arrays.asList(extraArguments)));
		}
		return masters;
	}

	/**
	 * A master with {@code replicaCount} replicas, returned once every replica's link is
	 * up.
	 */
	public Replicated replicated(int replicaCount) {
		logger.info("A master and {} replica(s) from {}", replicaCount, redisBinary());
		RedisNode master = start("master", null, List.of());
		List<RedisNode> replicas = new ArrayList<>(replicaCount);
		for (int i = 1; i <= replicaCount; i++) {
			RedisNode replica = start("replica-" + i, null,
					List.of("--replicaof", master.host(), Integer.toString(master.port())));
			replicas.add(replica);
		}
		for (RedisNode replica : replicas) {
			await(replica + " to sync with " + master, Duration.ofSeconds(20),
					() -> "up".equals(replica.info("replication").get("master_link_status")));
		}
		return new Replicated(master, replicas);
	}

	/**
	 * A master, {@code replicaCount} replicas and {@code sentinelCount} sentinels
	 * monitoring it under {@value Sentinels#MASTER_NAME} (quorum: a majority of the
	 * sentinels; down-after 1 s, failover-timeout 3 s), returned once every sentinel sees
	 * all replicas and the other sentinels.
	 */
	public Sentinels sentinels(int replicaCount, int sentinelCount) {
		Replicated data = replicated(replicaCount);
		return sentinels(data.master(), data.replicas(), sentinelCount);
	}

	/**
	 * {@code sentinelCount} sentinels monitoring a master this fixture started, whose
	 * replicas are already linked to it (for example through a {@link ChaosProxy}, to cut
	 * the replication link), as {@link #sentinels(int, int)} configures them.
	 */
	public Sentinels sentinels(RedisNode master, List<RedisNode> replicas, int sentinelCount) {
		logger.info("{} sentinels from {}", sentinelCount, redisBinary());
		int quorum = sentinelCount / 2 + 1;
		String config = "sentinel monitor " + Sentinels.MASTER_NAME + " 127.0.0.1 " + master.port() + " " + quorum
				+ "\n" + "sentinel down-after-milliseconds " + Sentinels.MASTER_NAME + " 1000\n"
				+ "sentinel failover-timeout " + Sentinels.MASTER_NAME + " 3000\n" + "sentinel parallel-syncs "
				+ Sentinels.MASTER_NAME + " 1\n";
		List<RedisNode> sentinels = new ArrayList<>(sentinelCount);
		for (int i = 1; i <= sentinelCount; i++) {
			sentinels.add(start("sentinel-" + i, config, List.of()));
		}
		Sentinels group = new Sentinels(master, replicas, sentinels);
		for (RedisNode sentinel : sentinels) {
			await(sentinel + " to discover the group", Duration.ofSeconds(30), () -> group.sees(sentinel));
		}
		return group;
	}

	/**
	 * A Redis Cluster of {@code masterCount} masters (at least 3) sharing the 16384 slots
	 * evenly, each with {@code replicasPerMaster} replicas, returned once every node
	 * reports {@code cluster_state:ok}.
	 */
	public Cluster cluster(int masterCount, int replicasPerMaster) {
		if (masterCount < 3) {
			throw new IllegalArgumentException("A Redis Cluster needs at least 3 masters, got " + masterCount);
		}
		logger.info("A Redis Cluster of {} masters with {} replica(s) each from {}", masterCount, replicasPerMaster,
				redisBinary());
		List<String> options = List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", "2000");
		List<RedisNode> masters = new ArrayList<>();
		List<RedisNode> replicas = new ArrayList<>();
		for (int i = 1; i <= masterCount; i++) {
			masters.add(start("cluster-master-" + i, null, options));
		}
		for (int i = 1; i <= masterCount * replicasPerMaster; i++) {
			replicas.add(start("cluster-replica-" + i, null, options));
		}
		Cluster cluster = new Cluster(masters, replicas);
		cluster.form();
		return cluster;
	}

	/** Every node this fixture started, in start order. */
	public List<RedisNode> nodes() {
		return List.copyOf(this.nodes);
	}

	/** Kills every node this fixture started (by PID) and removes their folders. */
	@Override
	public void close() {
		RuntimeException failure = null;
		for (RedisNode node : this.nodes) {
			try {
				node.close();
			}
			catch (RuntimeException ex) {
				failure = (failure != null) ? failure : ex;
			}
		}
		this.nodes.clear();
		if (failure != null) {
			throw failure;
		}
	}

	private RedisNode start(String name, String sentinelConfig, List<String> arguments) {
		IllegalStateException last = null;
		for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
			RedisNode node = new RedisNode(name, RedisProcesses.createDir(name), sentinelConfig, arguments, binary());
			try {
				node.start(freePort());
				this.nodes.add(node);
				announce(node);
				return node;
			}
			catch (IllegalStateException ex) {
				boolean portTaken = node.portInUse();
				node.close();
				if (!portTaken) {
					throw ex;
				}
				last = ex;
			}
		}
		throw last;
	}

	/**
	 * Logs, once per fixture and binary, the server that ran as it names itself: the line
	 * CI reads to prove which server each fixture ran (e.g. {@code valkey-server 8.0.1}).
	 */
	private void announce(RedisNode node) {
		RedisBinary current = binary();
		if (this.announced.add(current)) {
			String named = node.server();
			this.server = named;
			String chosen = (current == this.binary) ? current.source() + ", chosen by the test" : current.source();
			logger.info("fixture {} ran {} ({}, {})", this.id, named, current.path(), chosen);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot find a free port on 127.0.0.1", ex);
		}
	}

	static void await(String what, Duration timeout, BooleanSupplier condition) {
		try {
			Awaitility.await(what)
				.atMost(timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(25))
				.ignoreExceptionsInstanceOf(RuntimeException.class)
				.until(condition::getAsBoolean);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException("Timed out after " + timeout + " waiting for " + what, ex);
		}
	}

	/** A master and its replicas. */
	public record Replicated(RedisNode master, List<RedisNode> replicas) {

		public RedisNode replica() {
			return this.replicas.get(0);
		}

	}

}
