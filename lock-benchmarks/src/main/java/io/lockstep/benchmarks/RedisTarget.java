package io.lockstep.benchmarks;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

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
	 * What the server counted since the last reset: calls and Redis time per command,
	 * from {@code INFO commandstats} ({@code info} itself left out; a script's time
	 * includes the commands it runs, which are also counted on their own), and the CPU
	 * time the server used since it started, from {@code INFO cpu}.
	 */
	Stats stats() {
		Map<String, Long> calls = new HashMap<>();
		Map<String, Long> micros = new HashMap<>();
		double cpuSeconds = 0;
		RedisCommands<String, String> commands = this.admin.sync();
		String info = commands.info("commandstats") + "\n" + commands.info("cpu");
		for (String line : info.lines().toList()) {
			if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
					if (field.startsWith("calls=")) {
						calls.put(name, Long.parseLong(field.substring("calls=".length())));
					}
					else if (field.startsWith("usec=")) {
						micros.put(name, Long.parseLong(field.substring("usec=".length())));
					}
				}
			}
			else if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
				cpuSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		return new Stats(calls, micros, cpuSeconds);
	}

	/**
	 * Calls and microseconds of Redis time per command name, and the server's CPU time.
	 */
	record Stats(Map<String, Long> calls, Map<String, Long> micros, double cpuSeconds) {

		/** Calls of each command since {@code before}, commands without any left out. */
		Map<String, Long> callsSince(Stats before) {
			Map<String, Long> delta = new TreeMap<>();
			this.calls.forEach((name, count) -> {
				long since = count - before.calls.getOrDefault(name, 0L);
				if (since > 0) {
					delta.put(name, since);
				}
			});
			return delta;
		}

		/** Redis time of {@code command} since {@code before}, in microseconds. */
		long microsSince(Stats before, String command) {
			return this.micros.getOrDefault(command, 0L) - before.micros.getOrDefault(command, 0L);
		}

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
