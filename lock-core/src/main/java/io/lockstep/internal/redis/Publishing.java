package io.lockstep.internal.redis;

import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command a release publishes its notification with: {@code PUBLISH}, or on a Redis 7
 * Cluster {@code SPUBLISH} (sharded: only the slot's node and its replicas), decided
 * once, on first use, by asking the server whether it runs {@code SPUBLISH} (never from
 * its version string). Shared by a {@link RedisStore} and its {@link RedisWakeUps}, which
 * subscribe the same way.
 */
final class Publishing {

	private static final Logger logger = LoggerFactory.getLogger(Publishing.class);

	private final LockCommands commands;

	private final Consumer<Boolean> onDecided;

	private final String probeChannel;

	private volatile String command;

	/**
	 * @param mayShard whether the server decides (a Cluster: whether it runs
	 * {@code SPUBLISH}); else always {@code PUBLISH}
	 * @param probeChannel the channel the question is published on (nobody hears it; in
	 * the key prefix, which an ACL user's channel rights cover)
	 * @param onDecided told once whether notifications are sharded, before any use
	 */
	Publishing(LockCommands commands, boolean mayShard, String probeChannel, Consumer<Boolean> onDecided) {
		this.commands = commands;
		this.probeChannel = probeChannel;
		this.onDecided = onDecided;
		this.command = mayShard ? null : "PUBLISH";
	}

	/** The command, or {@code null} while not decided yet; never blocks. */
	String known() {
		return this.command;
	}

	/** The command, asking the server first if needed (bounded, blocking). */
	String command() {
		String current = this.command;
		if (current != null) {
			return current;
		}
		// asked outside the lock: a caller that waits (bounded) for Redis never holds up
		// the others; the server is asked, not its version string
		StringBuilder why = new StringBuilder();
		boolean sharded = this.commands.runsSpublish(this.probeChannel, why::append);
		synchronized (this) {
			if (this.command == null) {
				this.onDecided.accept(sharded);
				this.command = sharded ? "SPUBLISH" : "PUBLISH";
				if (sharded) {
					logger.info("Redis Cluster runs SPUBLISH: release notifications use sharded pub/sub");
				}
				else {
					logger.warn("Redis Cluster does not run SPUBLISH ({}): release notifications fall back to "
							+ "PUBLISH/SUBSCRIBE, which the Cluster broadcasts to every node", why);
				}
			}
			return this.command;
		}
	}

}
