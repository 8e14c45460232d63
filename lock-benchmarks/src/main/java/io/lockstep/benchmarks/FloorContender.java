package io.lockstep.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The floor: what any Redis lock has to pay at least. Raw Lettuce, one EVALSHA that runs
 * {@code SET key token NX PX lease} and one EVALSHA that compares and deletes; a waiter
 * retries at once (busy spin), with no fencing, reentrancy, renewal or notification. Not
 * a lock to use: it is the yardstick.
 */
final class FloorContender implements Contender {

	private static final String LEASE_MILLIS = "30000";

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> commands;

	private final String acquireSha;

	private final String releaseSha;

	private final String owner = UUID.randomUUID().toString();

	private final AtomicLong acquisitions = new AtomicLong();

	FloorContender(RedisTarget redis) {
		this.client = RedisClient.create(redis.uri());
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
		this.acquireSha = this.commands.scriptLoad(script("floor-acquire.lua"));
		this.releaseSha = this.commands.scriptLoad(script("floor-release.lua"));
	}

	@Override
	public Held acquire(String key) {
		String token = this.owner + ":" + this.acquisitions.incrementAndGet();
		String[] keys = { key };
		while (this.commands.<Long>evalsha(this.acquireSha, ScriptOutputType.INTEGER, keys, token, LEASE_MILLIS) == 0) {
			Thread.onSpinWait();
		}
		return () -> this.commands.<Long>evalsha(this.releaseSha, ScriptOutputType.INTEGER, keys, token);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

	static String script(String name) {
		try (InputStream in = FloorContender.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalStateException("Missing script " + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
