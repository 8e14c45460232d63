package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.internal.engine.Storage;

/**
 * Builds the {@link RedisStore} and the {@link RedisWakeUps} of a Redis deployment,
 * sharing what they share: the lock connection, the notification channel, the choice of
 * publish command and the client's id.
 */
public final class RedisStorage {

	private RedisStorage() {
	}

	/**
	 * The store and wake-up channel of a Redis deployment on the client (which stays the
	 * caller's to shut down).
	 * @param replicaAcks the replicas that must acknowledge an acquisition (WAIT), 0 for
	 * no check; a single master's layout only
	 */
	public static Storage create(AbstractRedisClient client, Duration commandTimeout, KeyLayout layout, int replicaAcks,
			Duration replicaAckTimeout) {
		LockScripts.load();
		LockCommands commands = new LockCommands(client, commandTimeout);
		LockCommands acquisitions = (replicaAcks > 0) ? new LockCommands(client, commandTimeout) : commands;
		ReleaseChannel channel = new ReleaseChannel(client, commandTimeout);
		// asked on a channel named like a fencing counter: in the key prefix, which an
		// ACL
		// user's channel rights cover, and heard by nobody
		Publishing publishing = new Publishing(commands, layout.mayShard(), layout.fence("__probe"), channel::sharded);
		String clientId = newClientId();
		commands.connectSoon();
		if (acquisitions != commands) {
			acquisitions.connectSoon();
		}
		RedisStore store = new RedisStore(commands, layout, publishing, clientId, acquisitions, replicaAcks,
				replicaAckTimeout);
		return new Storage(store, new RedisWakeUps(channel, layout, publishing, clientId));
	}

	/**
	 * A random id for a client's own channels (64 bits, hex): not a secret, only unique.
	 */
	private static String newClientId() {
		return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
	}

}
