package io.lockstep.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;

/**
 * The one pub/sub connection of a {@link PubSubChannel}: opened once, on first need, and
 * closed with it. What it hears goes to the {@link Events} given at construction, on the
 * client's I/O thread.
 */
final class PubSubConnection {

	/** What the connection hears. */
	interface Events {

		/** A message on a channel (sharded or not). */
		void message(String channel, byte[] message);

		/** The server ended a subscription (a Cluster slot moved, for one). */
		void lost(String channel);

		/** Connected: channels wanted meanwhile may be subscribed now. */
		void connected();

	}

	private final AbstractRedisClient client;

	private final Duration timeout;

	private final Events events;

	private volatile StatefulRedisPubSubConnection<byte[], byte[]> connection;

	private volatile boolean closed;

	/** Held while the connection is opened or closed. */
	private final ReentrantLock connecting = new ReentrantLock();

	PubSubConnection(AbstractRedisClient client, Duration timeout, Events events) {
		this.client = client;
		this.timeout = timeout;
		this.events = events;
	}

	/** The open connection, or {@code null} (not opened yet, or closed). */
	StatefulRedisPubSubConnection<byte[], byte[]> current() {
		return this.closed ? null : this.connection;
	}

	boolean isClosed() {
		return this.closed;
	}

	/**
	 * Opens the connection once; callers meanwhile wait on a {@link ReentrantLock}, not a
	 * monitor, so that a virtual thread waiting for Redis never pins its carrier. Blocks
	 * at most the timeout.
	 */
	StatefulRedisPubSubConnection<byte[], byte[]> open() {
		this.connecting.lock();
		try {
			return connect();
		}
		finally {
			this.connecting.unlock();
		}
	}

	/** Under {@link #connecting}. */
	private StatefulRedisPubSubConnection<byte[], byte[]> connect() {
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		if (current == null && !this.closed) {
			current = (this.client instanceof RedisClusterClient cluster)
					? cluster.connectPubSub(ByteArrayCodec.INSTANCE)
					: ((RedisClient) this.client).connectPubSub(ByteArrayCodec.INSTANCE);
			current.setTimeout(this.timeout);
			current.addListener(new RedisPubSubAdapter<>() {
				@Override
				public void message(byte[] channel, byte[] message) {
					PubSubConnection.this.events.message(name(channel), message);
				}

				@Override
				public void smessage(byte[] channel, byte[] message) {
					PubSubConnection.this.events.message(name(channel), message);
				}

				@Override
				public void unsubscribed(byte[] channel, long count) {
					PubSubConnection.this.events.lost(name(channel));
				}

				@Override
				public void sunsubscribed(byte[] channel, long count) {
					PubSubConnection.this.events.lost(name(channel));
				}
			});
			this.connection = current;
			this.events.connected();
		}
		return current;
	}

	/** Sends (S)SUBSCRIBE for the channel; never blocks. */
	static CompletableFuture<?> subscribe(StatefulRedisPubSubConnection<byte[], byte[]> connection, String channel,
			boolean sharded) {
		byte[] name = channel.getBytes(StandardCharsets.UTF_8);
		return (sharded ? connection.async().ssubscribe(name) : connection.async().subscribe(name))
			.toCompletableFuture();
	}

	/** Sends (S)UNSUBSCRIBE for the channel; never blocks. */
	static void unsubscribe(StatefulRedisPubSubConnection<byte[], byte[]> connection, String channel, boolean sharded) {
		byte[] name = channel.getBytes(StandardCharsets.UTF_8);
		if (sharded) {
			connection.async().sunsubscribe(name);
		}
		else {
			connection.async().unsubscribe(name);
		}
	}

	private static String name(byte[] channel) {
		return new String(channel, StandardCharsets.UTF_8);
	}

	void close() {
		StatefulRedisPubSubConnection<byte[], byte[]> current;
		this.connecting.lock();
		try {
			this.closed = true;
			current = this.connection;
			this.connection = null;
		}
		finally {
			this.connecting.unlock();
		}
		// closing waits for the connection: outside the lock
		if (current != null && current.isOpen()) {
			current.close();
		}
	}

}
