package io.lockstep.faults;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The checkers' storage: a never-faulted {@code redis-server}, apart from the Redis the
 * locks use, shared by every JVM of a test. It keeps an occupancy counter per lock
 * (overlaps), a counter updated by a non-atomic read-modify-write (lost updates) and a
 * fenced register that rejects a token lower than the highest it accepted (or equal to it
 * from another holder), or, for the unprotected control, accepts it and counts it as a
 * stale write.
 */
final class Ledger implements AutoCloseable {

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> redis;

	private final String fencedWrite;

	Ledger(int port) {
		this.client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		this.connection = this.client.connect();
		this.redis = this.connection.sync();
		this.fencedWrite = this.redis.scriptLoad(script());
	}

	/**
	 * Enters the critical section of {@code key}, counts one read-modify-write of its
	 * counter (GET, then SET to one more, not atomic) and leaves.
	 * @return whether another holder was inside at the same time
	 */
	boolean criticalSection(String key) {
		boolean overlap = this.redis.incr("inside:" + key) != 1;
		String value = this.redis.get("counter:" + key);
		this.redis.set("counter:" + key, Long.toString((value != null) ? Long.parseLong(value) + 1 : 1));
		this.redis.decr("inside:" + key);
		return overlap;
	}

	/** The counter of {@code key}: the read-modify-writes that were not lost. */
	long counter(String key) {
		String value = this.redis.get("counter:" + key);
		return (value != null) ? Long.parseLong(value) : 0;
	}

	/**
	 * Writes to the register of {@code key} with a fencing token. A write is stale when
	 * its token is lower than the highest accepted, or equal to it but from another
	 * writer (two holders with one token).
	 * @param writer who writes: one lock holder, the same for all its writes
	 * @param fenced whether the register rejects a stale write (else it accepts it and
	 * counts it)
	 * @return whether the write was accepted
	 */
	boolean write(String key, long token, String writer, boolean fenced) {
		Long written = this.redis.evalsha(
				this.fencedWrite, ScriptOutputType.INTEGER, new String[] { "fence:" + key, "register:" + key,
						"stale-accepted:" + key, "stale-rejected:" + key, "writer:" + key },
				Long.toString(token), writer + ":" + token, fenced ? "1" : "0", writer);
		return written == 1L;
	}

	/** Stale writes the register of {@code key} accepted (the control's anomaly). */
	long staleAccepted(String key) {
		return count("stale-accepted:" + key);
	}

	/** Stale writes the register of {@code key} rejected. */
	long staleRejected(String key) {
		return count("stale-rejected:" + key);
	}

	/** The value the register of {@code key} holds now. */
	String register(String key) {
		return this.redis.get("register:" + key);
	}

	private long count(String key) {
		String value = this.redis.get(key);
		return (value != null) ? Long.parseLong(value) : 0;
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

	private static String script() {
		try (InputStream in = Ledger.class.getResourceAsStream("fenced-write.lua")) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
