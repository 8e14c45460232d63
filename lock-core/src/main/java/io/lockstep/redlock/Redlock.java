package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lockstep.internal.engine.Storage;
import io.lockstep.internal.redis.TemplateBuilders;
import io.lockstep.internal.redis.TemplateBuilders.StorageFactory;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redis.RedisLockTemplateBuilder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.util.Assert;

/**
 * Redlock: a {@link RedisLockTemplate} over N ≥ 3 independent Redis masters (no
 * replication between them), quorum N/2+1. The same API, waiting, watchdog, lease-loss
 * detection and fencing tokens as on one master.
 *
 * <pre class="code">
 * RedisLockTemplate locks = Redlock.builder(List.of(RedisURI.create("redis://a:6379"),
 *         RedisURI.create("redis://b:6379"), RedisURI.create("redis://c:6379")))
 *     .leaseTime(Duration.ofSeconds(30))
 *     .build();
 * </pre>
 *
 * <p>
 * A lock is acquired only when a quorum of nodes granted it within its validity time
 * ({@code lease - elapsed - drift}, drift = lease × {@link #clockDriftFactor} + 2 ms),
 * renewed only when a quorum confirms, and lost when a quorum cannot confirm it before
 * the holder's local deadline, which is the end of that validity time.
 *
 * <p>
 * <b>Restart rule</b>: every node must persist its data ({@code appendonly yes}, best
 * with {@code appendfsync always}). A node whose {@code INFO persistence} does not report
 * {@code aof_enabled:1} refuses to vote (checked inside every acquire; logged at ERROR):
 * a node that restarts empty could otherwise give a second quorum for a lock that is
 * still held. A node that loses its data all the same (its AOF file deleted, FLUSHALL)
 * must be kept out for longer than the longest lease before it rejoins.
 *
 * <p>
 * <b>Fencing tokens</b>: the lock's token is the highest of the tokens issued by the
 * nodes that granted it, written back to the counters of a quorum of them before the lock
 * is reported acquired. Tokens strictly increase in grant order, per key, across all
 * clients and lease expiry, also when a holder overruns its validity, as long as node
 * clocks never jump and run at rates within the drift factor of the clients' clocks, no
 * node loses its data, and nothing else writes the lock keys or
 * {@code <key-prefix>__fence}. When that breaks, two grants may overlap and their tokens
 * need not follow grant order.
 *
 * <p>
 * Not safe: when a holder runs past its validity (GC pause, SIGSTOP), when a node's clock
 * jumps (Redis expires keys by the wall clock), or when a node loses its data despite the
 * rule above. Redlock is not consensus; pass the fencing token to storage where
 * correctness matters.
 */
public final class Redlock {

	/** The default clock-drift factor: 1% of the lease, as in the Redlock reference. */
	static final double DEFAULT_CLOCK_DRIFT_FACTOR = 0.01;

	/** The default bound on each node's reply. */
	static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(200);

	private static final Logger logger = LoggerFactory.getLogger(Redlock.class);

	/** The nodes' URIs, when Lockstep creates the clients; else {@code null}. */
	private final @Nullable List<RedisURI> uris;

	/** The user's clients, when they are given; else {@code null}. */
	private final @Nullable List<RedisClient> clients;

	private double clockDriftFactor = DEFAULT_CLOCK_DRIFT_FACTOR;

	private Duration nodeTimeout = DEFAULT_NODE_TIMEOUT;

	private boolean requirePersistence = true;

	private Redlock(@Nullable List<RedisURI> uris, @Nullable List<RedisClient> clients) {
		this.uris = uris;
		this.clients = clients;
	}

	/**
	 * A template builder on the masters at these URIs, with the default drift factor and
	 * node timeout; the template creates a client for each and shuts them down when
	 * closed.
	 */
	public static RedisLockTemplateBuilder builder(List<RedisURI> nodes) {
		return nodes(nodes).builder();
	}

	/**
	 * Redlock on the masters at these URIs (at least 3, distinct, standalone); the
	 * template creates a Lettuce client for each and shuts them down when closed.
	 */
	public static Redlock nodes(List<RedisURI> nodes) {
		Assert.notNull(nodes, "'nodes' must not be null");
		Assert.isTrue(nodes.size() >= 3,
				() -> "Redlock needs at least 3 independent Redis masters, got " + nodes.size());
		Set<String> distinct = new HashSet<>();
		for (RedisURI uri : nodes) {
			Assert.notNull(uri, "'nodes' must not contain null");
			Assert.isTrue(uri.getSentinels().isEmpty(),
					() -> "Redlock needs independent masters, not Sentinel: " + name(uri));
			Assert.isTrue(distinct.add(name(uri) + "/" + uri.getDatabase()),
					() -> "Redlock nodes must be distinct: " + name(uri) + " is listed twice");
		}
		return new Redlock(List.copyOf(nodes), null);
	}

	/**
	 * Redlock on one Lettuce client per master (at least 3); the clients stay yours to
	 * shut down. Clients with {@code DisconnectedBehavior.REJECT_COMMANDS} fail fast for
	 * a node that is down instead of queueing commands for it.
	 */
	public static Redlock clients(List<RedisClient> clients) {
		Assert.notNull(clients, "'clients' must not be null");
		Assert.isTrue(clients.size() >= 3,
				() -> "Redlock needs at least 3 independent Redis masters, got " + clients.size());
		clients.forEach((client) -> Assert.notNull(client, "'clients' must not contain null"));
		Assert.isTrue(new HashSet<>(clients).size() == clients.size(), "Redlock clients must be distinct");
		return new Redlock(null, List.copyOf(clients));
	}

	/**
	 * The clock-drift allowance as a fraction of the lease (plus 2 ms); default 0.01.
	 * @param clockDriftFactor at least 0, at most 0.5
	 */
	public Redlock clockDriftFactor(double clockDriftFactor) {
		Assert.isTrue(clockDriftFactor >= 0 && clockDriftFactor <= 0.5, "'clockDriftFactor' must be between 0 and 0.5");
		this.clockDriftFactor = clockDriftFactor;
		return this;
	}

	/**
	 * The bound on each node's reply; default 200ms; at most half the command timeout
	 * (shortened to it). A node that does not reply in time only loses its vote.
	 */
	public Redlock nodeTimeout(Duration nodeTimeout) {
		Assert.isTrue(nodeTimeout != null && !nodeTimeout.isNegative() && !nodeTimeout.isZero(),
				"'nodeTimeout' must be positive");
		this.nodeTimeout = nodeTimeout;
		return this;
	}

	/** Tests only: lets nodes that do not persist vote (the hazard the rule prevents). */
	Redlock requirePersistence(boolean requirePersistence) {
		this.requirePersistence = requirePersistence;
		return this;
	}

	/** A template builder on these nodes with these settings. */
	public RedisLockTemplateBuilder builder() {
		RedlockSettings settings = new RedlockSettings(this.clockDriftFactor, this.nodeTimeout,
				this.requirePersistence);
		List<RedisClient> clients = this.clients;
		StorageFactory factory;
		if (clients != null) {
			factory = (timeout, prefix) -> storage(
					new RedlockStore(names(clients.size()), clients, timeout, prefix, settings, () -> {
					}));
		}
		else {
			List<RedisURI> uris = Objects.requireNonNull(this.uris, "Redlock has neither clients nor URIs");
			factory = (timeout, prefix) -> storage(owned(uris, timeout, prefix, settings));
		}
		return TemplateBuilders.on(RedisLockTemplateBuilder.class, factory);
	}

	private static RedlockStore owned(List<RedisURI> uris, Duration commandTimeout, String keyPrefix,
			RedlockSettings settings) {
		ClientResources resources = DefaultClientResources.create();
		ClientOptions options = ClientOptions.builder()
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
			.socketOptions(SocketOptions.builder().connectTimeout(Nodes.CONNECT_TIMEOUT).build())
			.build();
		List<RedisClient> clients = new ArrayList<>();
		List<String> names = new ArrayList<>();
		for (RedisURI uri : uris) {
			RedisClient client = RedisClient.create(resources,
					RedisURI.builder(uri).withTimeout(Nodes.CONNECT_TIMEOUT).build());
			client.setOptions(options);
			clients.add(client);
			names.add(name(uri));
		}
		return new RedlockStore(names, clients, commandTimeout, keyPrefix, settings, () -> {
			clients.forEach((client) -> client.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
			try {
				resources.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (Exception ex) {
				logger.debug("Shutting down the Redlock client resources did not complete", ex);
			}
		});
	}

	private static Storage storage(RedlockStore store) {
		return new Storage(store, store.wakeUps());
	}

	private static String name(RedisURI uri) {
		return "redis://" + uri.getHost() + ":" + uri.getPort();
	}

	private static List<String> names(int count) {
		List<String> names = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			names.add("node " + i + " of " + count);
		}
		return names;
	}

}
