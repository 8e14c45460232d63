package io.lockstep.internal.redis;

import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command a release publishes its notification with: {@code PUBLISH}, or on a Redis 7
 * Cluster {@code SPUBLISH} (sharded: only the slot's node and its replicas), decided
 * once, on first use, from the server's version. Shared by a {@link RedisStore} and its
 * {@link RedisWakeUps}, which subscribe the same way.
 */
final class Publishing {

	private static final Logger logger = LoggerFactory.getLogger(Publishing.class);

	private final LockCommands commands;

	private final Consumer<Boolean> onDecided;

	private volatile String command;

	/**
	 * @param mayShard whether the server's version decides (a Cluster); else always
	 * {@code PUBLISH}
	 * @param onDecided told once whether notifications are sharded, before any use
	 */
	Publishing(LockCommands commands, boolean mayShard, Consumer<Boolean> onDecided) {
		this.commands = commands;
		this.onDecided = onDecided;
		this.command = mayShard ? null : "PUBLISH";
	}

	/** The command, or {@code null} while not decided yet; never blocks. */
	String known() {
		return this.command;
	}

	/** The command, asking the server's version first if needed (bounded, blocking). */
	String command() {
		String current = this.command;
		if (current != null) {
			return current;
		}
		// asked outside the lock: a caller that waits (bounded) for Redis never holds up
		// the others
		String version = this.commands.serverVersion();
		synchronized (this) {
			if (this.command == null) {
				boolean sharded = Integer.parseInt(version.split("\\.")[0]) >= 7;
				this.onDecided.accept(sharded);
				this.command = sharded ? "SPUBLISH" : "PUBLISH";
				if (sharded) {
					logger.info("Redis Cluster {}: release notifications use sharded pub/sub", version);
				}
				else {
					logger.warn("Redis Cluster {} has no sharded pub/sub (Redis 7+): release notifications fall back "
							+ "to PUBLISH/SUBSCRIBE, which the Cluster broadcasts to every node", version);
				}
			}
			return this.command;
		}
	}

}
