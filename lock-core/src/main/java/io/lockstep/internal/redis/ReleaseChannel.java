package io.lockstep.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lockstep.internal.engine.WakeUps.HandOffListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Release notifications over Redis pub/sub: one connection per client, opened on first
 * need, subscribed to the channel of each key that has local waiters (the channel is
 * named like the key; {@code release.lua} publishes on it), and, for the whole life of
 * the client, to the client's own hand-off channel(s): when a release hands a lock to a
 * queued waiter it publishes {@code "g:<owner>:<fence>:<lease ms>:<key>"} on the channel
 * of the waiter's client. The listeners only unpark waiters. Where SUBSCRIBE is refused
 * (managed Redis, an ACL without channel rights) it logs one WARN and reports that
 * notifications are unavailable, so waiters poll with backoff.
 * <p>
 * A subscription that is lost is made again: Redis 7 ends the sharded subscriptions of a
 * slot when its node loses the slot (a Cluster failover; Lettuce then forgets them and
 * does not subscribe again after a reconnect), and a SUBSCRIBE may fail (a timeout, a
 * node not reachable yet). Every channel still wanted — the client's own for its whole
 * life, a key's until it is unsubscribed — is subscribed again at once after a loss and
 * every {@value #RETRY_MILLIS} ms after a failure; meanwhile {@link #hearsOwn} says no,
 * so waiters re-check instead of waiting for a hand-off that cannot reach them.
 */
public final class ReleaseChannel implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ReleaseChannel.class);

	private static final CompletableFuture<Void> NOT_SENT = CompletableFuture.completedFuture(null);

	/** The pause before a failed subscription is tried again. */
	static final long RETRY_MILLIS = 200;

	private final AbstractRedisClient client;

	private final Duration timeout;

	private volatile BiConsumer<String, String> listener = (key, message) -> {
	};

	private volatile HandOffListener handOffListener;

	/**
	 * The client's own hand-off channels subscribed so far, each with the subscription
	 * (done once Redis confirmed it).
	 */
	private final Map<String, CompletableFuture<?>> own = new ConcurrentHashMap<>();

	/** The key channels subscribed and not unsubscribed since. */
	private final Set<String> keys = ConcurrentHashMap.newKeySet();

	private volatile StatefulRedisPubSubConnection<byte[], byte[]> connection;

	private volatile boolean refused;

	private volatile boolean sharded;

	private volatile boolean closed;

	/** Held while the connection is opened or closed. */
	private final ReentrantLock connecting = new ReentrantLock();

	public ReleaseChannel(AbstractRedisClient client, Duration timeout) {
		this.client = client;
		this.timeout = timeout;
	}

	/**
	 * Whether to use sharded pub/sub ({@code SSUBSCRIBE}, Redis 7 Cluster); set before
	 * the first subscription.
	 */
	public void sharded(boolean sharded) {
		this.sharded = sharded;
	}

	public void onRelease(Consumer<String> listener) {
		this.listener = (key, message) -> listener.accept(key);
	}

	/**
	 * Like {@link #onRelease} but also told the message ({@code release.lua}'s ARGV[2]).
	 */
	public void onMessage(BiConsumer<String, String> listener) {
		this.listener = listener;
	}

	/** Told the hand-off messages, which then do not reach the release listener. */
	public void onHandOff(HandOffListener listener) {
		this.handOffListener = listener;
	}

	private void deliver(byte[] channel, byte[] message) {
		String name = new String(channel, StandardCharsets.UTF_8);
		String text = new String(message, StandardCharsets.UTF_8);
		HandOffListener handOff = this.handOffListener;
		if (handOff != null && text.startsWith("g:") && this.own.containsKey(name)) {
			String[] parts = text.split(":", 5);
			if (parts.length == 5) {
				handOff.handedOff(parts[4], parts[1], Long.parseLong(parts[2]), Long.parseLong(parts[3]));
			}
			return;
		}
		this.listener.accept(name, text);
	}

	/**
	 * A random id for a client's own channels (64 bits, hex): not a secret, only unique.
	 */
	public static String newClientId() {
		return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
	}

	/**
	 * Subscribes to one of the client's own hand-off channels, once for the life of the
	 * client (Lettuce subscribes again after a reconnect).
	 * @return completes when subscribed
	 */
	public CompletableFuture<?> subscribeOwn(String channel) {
		synchronized (this.own) {
			CompletableFuture<?> current = this.own.get(channel);
			if (current != null && !current.isCompletedExceptionally()) {
				return NOT_SENT;
			}
			return subscribeOwnNow(channel);
		}
	}

	/** Sends SUBSCRIBE for one of the client's own channels; under the own monitor. */
	private CompletableFuture<?> subscribeOwnNow(String channel) {
		CompletableFuture<?> subscribed = send(channel);
		if (subscribed == NOT_SENT) {
			// not connected, refused or closed: the next waiter asks again
			this.own.remove(channel);
		}
		else {
			this.own.put(channel, subscribed);
		}
		return subscribed;
	}

	/**
	 * Whether hand-offs on one of the client's own channels reach it now: subscribed,
	 * confirmed, and the connection open (a message published while it reconnects is
	 * lost; waiters re-check periodically).
	 */
	public boolean hearsOwn(String channel) {
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		return current != null && current.isOpen() && !this.refused && !this.closed && confirmed(this.own.get(channel));
	}

	private static boolean confirmed(CompletableFuture<?> subscribed) {
		return subscribed != null && subscribed.isDone() && !subscribed.isCompletedExceptionally();
	}

	public boolean notifies() {
		return !this.refused;
	}

	/** Whether {@link #subscribe} sends now (the connection is open and not refused). */
	public boolean isConnected() {
		return this.connection != null && !this.refused && !this.closed;
	}

	/** Opens the connection if needed; blocks at most the command timeout. */
	public void prepare() {
		if (this.refused || this.closed || this.connection != null) {
			return;
		}
		try {
			connection();
		}
		catch (RuntimeException ex) {
			failed(ex);
		}
	}

	/**
	 * Subscribes to a key's channel until {@link #unsubscribe}; subscribes again whenever
	 * the subscription fails or is lost meanwhile.
	 */
	public CompletableFuture<?> subscribe(String key) {
		this.keys.add(key);
		return send(key);
	}

	/**
	 * Sends (S)SUBSCRIBE; when it fails other than by a refusal, tries again after
	 * {@value #RETRY_MILLIS} ms while the channel is still wanted.
	 */
	private CompletableFuture<?> send(String name) {
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		if (current == null || this.refused || this.closed) {
			return NOT_SENT;
		}
		try {
			byte[] channel = name.getBytes(StandardCharsets.UTF_8);
			CompletableFuture<?> subscribed = (this.sharded ? current.async().ssubscribe(channel)
					: current.async().subscribe(channel))
				.toCompletableFuture();
			subscribed.whenComplete((done, failure) -> {
				if (failure != null && !failed(failure)) {
					CompletableFuture.delayedExecutor(RETRY_MILLIS, TimeUnit.MILLISECONDS).execute(() -> {
						try {
							again(name, subscribed);
						}
						catch (Throwable ex) {
							logger.error("Subscribing again to {} failed", name, ex);
						}
					});
				}
			});
			return subscribed;
		}
		catch (RuntimeException ex) {
			failed(ex);
			return NOT_SENT;
		}
	}

	/**
	 * Subscribes again to a channel still wanted whose subscription was lost or failed
	 * ({@code failed}; {@code null} for a loss). Never blocks: it runs on the client's
	 * I/O thread after a loss.
	 */
	private void again(String name, CompletableFuture<?> failed) {
		if (this.refused || this.closed) {
			return;
		}
		synchronized (this.own) {
			CompletableFuture<?> current = this.own.get(name);
			if (current != null) {
				if (failed == null || current == failed) {
					logger.debug("Subscribing again to {} ({})", name, (failed != null) ? "failed" : "lost");
					subscribeOwnNow(name);
				}
				return;
			}
		}
		if (this.keys.contains(name)) {
			logger.debug("Subscribing again to {} ({})", name, (failed != null) ? "failed" : "lost");
			send(name);
		}
	}

	public void await(CompletableFuture<?> subscribed) {
		try {
			subscribed.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			failed(ex);
		}
	}

	public void unsubscribe(String key) {
		this.keys.remove(key);
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		if (current != null && !this.refused && !this.closed) {
			try {
				byte[] channel = key.getBytes(StandardCharsets.UTF_8);
				if (this.sharded) {
					current.async().sunsubscribe(channel);
				}
				else {
					current.async().unsubscribe(channel);
				}
			}
			catch (RuntimeException ex) {
				failed(ex);
			}
		}
	}

	/**
	 * A refusal (no permission, unknown command) switches to polling for good; other
	 * failures are transient.
	 * @return whether it was a refusal
	 */
	private boolean failed(Throwable ex) {
		Throwable cause = ((ex instanceof ExecutionException || ex instanceof CompletionException)
				&& ex.getCause() != null) ? ex.getCause() : ex;
		String message = String.valueOf(cause.getMessage());
		boolean refusal = message.contains("NOPERM") || message.contains("unknown command")
				|| message.contains("not allowed");
		if (refusal && !this.refused) {
			this.refused = true;
			logger.warn("Redis refused SUBSCRIBE ({}); waiting for locks falls back to polling with jittered backoff",
					message);
		}
		else if (!refusal) {
			logger.debug("SUBSCRIBE did not complete ({}); waiters re-check periodically", message);
		}
		return refusal;
	}

	/**
	 * Opens the connection once; callers meanwhile wait on a {@link ReentrantLock}, not a
	 * monitor, so that a virtual thread waiting for Redis never pins its carrier.
	 */
	private StatefulRedisPubSubConnection<byte[], byte[]> connection() {
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
					deliver(channel, message);
				}

				@Override
				public void smessage(byte[] channel, byte[] message) {
					deliver(channel, message);
				}

				@Override
				public void unsubscribed(byte[] channel, long count) {
					again(new String(channel, StandardCharsets.UTF_8), null);
				}

				@Override
				public void sunsubscribed(byte[] channel, long count) {
					again(new String(channel, StandardCharsets.UTF_8), null);
				}
			});
			this.connection = current;
			// keys subscribed while there was no connection yet
			this.keys.forEach(this::send);
		}
		return current;
	}

	@Override
	public void close() {
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
