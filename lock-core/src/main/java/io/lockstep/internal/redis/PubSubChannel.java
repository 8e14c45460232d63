package io.lockstep.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;

import io.lettuce.core.AbstractRedisClient;
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
 * of the waiter's client. Hand-offs on the client's own channels go to the hand-off
 * listener, every other message to the message listener; each is set once, when the
 * engine is built, and only unparks waiters. Where SUBSCRIBE is refused (managed Redis,
 * an ACL without channel rights) it logs one WARN and reports that notifications are
 * unavailable, so waiters poll with backoff.
 * <p>
 * A subscription that is lost is made again: Redis 7 ends the sharded subscriptions of a
 * slot when its node loses the slot (a Cluster failover; Lettuce then forgets them and
 * does not subscribe again after a reconnect), and a SUBSCRIBE may fail (a timeout, a
 * node not reachable yet). Every channel still wanted — the client's own for its whole
 * life, a key's until it is unsubscribed — is subscribed again at once after a loss and
 * every {@value #RETRY_MILLIS} ms after a failure; meanwhile {@link #hearsOwn} says no,
 * so waiters re-check instead of waiting for a hand-off that cannot reach them.
 */
public final class PubSubChannel implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(PubSubChannel.class);

	private static final CompletableFuture<Void> NOT_SENT = CompletableFuture.completedFuture(null);

	/** The pause before a failed subscription is tried again. */
	static final long RETRY_MILLIS = 200;

	private final Duration timeout;

	private final PubSubConnection connection;

	/** Told every message but the hand-offs on the client's own channels. */
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

	private volatile boolean refused;

	private volatile boolean sharded;

	public PubSubChannel(AbstractRedisClient client, Duration timeout) {
		this.timeout = timeout;
		this.connection = new PubSubConnection(client, timeout, new PubSubConnection.Events() {

			@Override
			public void message(String channel, byte[] message) {
				PubSubChannel.this.deliver(channel, new String(message, StandardCharsets.UTF_8),
						PubSubChannel.this.own.containsKey(channel));
			}

			@Override
			public void lost(String channel) {
				again(channel, null);
			}

			@Override
			public void connected() {
				// keys subscribed while there was no connection yet
				PubSubChannel.this.keys.forEach(PubSubChannel.this::send);
			}

		});
	}

	/**
	 * Whether to use sharded pub/sub ({@code SSUBSCRIBE}, Redis 7 Cluster); set before
	 * the first subscription.
	 */
	public void sharded(boolean sharded) {
		this.sharded = sharded;
	}

	/**
	 * Told each message with its channel (the key's stored name for a release;
	 * {@code release.lua}'s ARGV[2] is the message), except the hand-offs on the client's
	 * own channels once {@link #onHandOff} is set.
	 */
	public void onMessage(BiConsumer<String, String> listener) {
		this.listener = listener;
	}

	/** Told the hand-off messages, which then do not reach the message listener. */
	public void onHandOff(HandOffListener listener) {
		this.handOffListener = listener;
	}

	/**
	 * @param own whether the channel is one of the client's own hand-off channels
	 */
	private void deliver(String channel, String message, boolean own) {
		HandOffListener handOff = this.handOffListener;
		if (handOff != null && own && LockScripts.isHandOff(message)) {
			LockScripts.HandOff parsed = LockScripts.readHandOff(message);
			if (parsed != null) {
				handOff.handedOff(parsed.key(), parsed.owner(), parsed.fencingToken(), parsed.leaseMillis());
			}
			return;
		}
		this.listener.accept(channel, message);
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
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection.current();
		return current != null && current.isOpen() && !this.refused && confirmed(this.own.get(channel));
	}

	private static boolean confirmed(CompletableFuture<?> subscribed) {
		return subscribed != null && subscribed.isDone() && !subscribed.isCompletedExceptionally();
	}

	public boolean notifies() {
		return !this.refused;
	}

	/** Whether {@link #subscribe} sends now (the connection is open and not refused). */
	public boolean isConnected() {
		return this.connection.current() != null && !this.refused;
	}

	/** Opens the connection if needed; blocks at most the command timeout. */
	public void prepare() {
		if (this.refused || this.connection.isClosed() || this.connection.current() != null) {
			return;
		}
		try {
			this.connection.open();
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
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection.current();
		if (current == null || this.refused) {
			return NOT_SENT;
		}
		try {
			CompletableFuture<?> subscribed = PubSubConnection.subscribe(current, name, this.sharded);
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
		if (this.refused || this.connection.isClosed()) {
			return;
		}
		logger.debug("Subscribing again to {} ({})", name, (failed != null) ? "failed" : "lost");
		synchronized (this.own) {
			CompletableFuture<?> current = this.own.get(name);
			if (current != null) {
				if (failed == null || current == failed) {
					subscribeOwnNow(name);
				}
				return;
			}
		}
		if (this.keys.contains(name)) {
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
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection.current();
		if (current != null && !this.refused) {
			try {
				PubSubConnection.unsubscribe(current, key, this.sharded);
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

	@Override
	public void close() {
		this.connection.close();
	}

}
