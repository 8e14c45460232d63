package io.lockstep.benchmarks;

import java.util.HashMap;
import java.util.Map;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

/**
 * The one redis-server a benchmark runs against, and the harness's own connection to it
 * (for {@code INFO commandstats}, {@code FLUSHALL}, {@code CONFIG RESETSTAT}).
 *
 * <p>
 * {@link BenchmarkRunner} starts the server once and passes its port to every JMH fork as
 * the system property {@value #PORT_PROPERTY}; a benchmark run without it (from an IDE)
 * starts a redis-server of its own through {@link RedisFixture} and stops it on
 * {@link #close()}.
 */
final class RedisTarget implements AutoCloseable {

	static final String PORT_PROPERTY = "lockstep.bench.redis-port";

	private final String host;

	private final int port;

	private final RedisFixture ownFixture;

	private final RedisClient adminClient;

	private final StatefulRedisConnection<String, String> admin;

	RedisTarget(String host, int port) {
		this(host, port, null);
	}

	private RedisTarget(String host, int port, RedisFixture ownFixture) {
		this.host = host;
		this.port = port;
		this.ownFixture = ownFixture;
		this.adminClient = RedisClient.create(uri());
		this.admin = this.adminClient.connect();
	}

	/** The server named by {@value #PORT_PROPERTY}, else one started here. */
	static RedisTarget locate() {
		String port = System.getProperty(PORT_PROPERTY);
		if (port != null) {
			return new RedisTarget("127.0.0.1", Integer.parseInt(port));
		}
		RedisFixture fixture = new RedisFixture();
		try {
			RedisNode node = fixture.standalone();
			return new RedisTarget(node.host(), node.port(), fixture);
		}
		catch (RuntimeException ex) {
			fixture.close();
			throw ex;
		}
	}

	String host() {
		return this.host;
	}

	int port() {
		return this.port;
	}

	/** {@code redis://host:port}. */
	String uri() {
		return "redis://" + this.host + ":" + this.port;
	}

	/** Empties the server and zeroes its command statistics. */
	void reset() {
		RedisCommands<String, String> commands = this.admin.sync();
		commands.flushall();
		commands.configResetstat();
	}

	/**
	 * Calls per command since the last reset, from {@code INFO commandstats}; counts the
	 * commands that scripts run too. {@code info} itself (the harness's own) is left out.
	 */
	Map<String, Long> commandCalls() {
		return commandStats().calls();
	}

	/**
	 * Calls and Redis time per command since the last reset, from
	 * {@code INFO commandstats} ({@code info} itself left out). A script's time includes
	 * the commands it runs, which are also counted on their own.
	 */
	CommandStats commandStats() {
		String text = this.admin.sync().info("commandstats");
		Map<String, Long> calls = new HashMap<>();
		Map<String, Long> micros = new HashMap<>();
		text.lines().filter((line) -> line.startsWith("cmdstat_")).forEach((line) -> {
			String name = line.substring("cmdstat_".length(), line.indexOf(':'));
			String fields = line.substring(line.indexOf(':') + 1);
			for (String field : fields.split(",")) {
				if (field.startsWith("calls=")) {
					calls.put(name, Long.parseLong(field.substring("calls=".length())));
				}
				else if (field.startsWith("usec=")) {
					micros.put(name, Long.parseLong(field.substring("usec=".length())));
				}
			}
		});
		calls.remove("info");
		micros.remove("info");
		return new CommandStats(calls, micros);
	}

	/** Calls and microseconds of Redis time per command name. */
	record CommandStats(Map<String, Long> calls, Map<String, Long> micros) {
	}

	/** {@code redis_version} from {@code INFO server}. */
	String serverVersion() {
		return this.admin.sync()
			.info("server")
			.lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.map((line) -> line.substring("redis_version:".length()).trim())
			.findFirst()
			.orElse("unknown");
	}

	@Override
	public void close() {
		this.admin.close();
		this.adminClient.shutdown();
		if (this.ownFixture != null) {
			this.ownFixture.close();
		}
	}

}
