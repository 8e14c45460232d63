package io.lockstep.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parks threads waiting for a lock until it is released. One pub/sub connection per
 * client, opened on first need, subscribes to the channel of each key that has local
 * waiters (the channel is named like the key; {@code release.lua} publishes on it) and
 * unsubscribes when the last one leaves. A release wakes one local waiter per process; a
 * release in this process wakes it without waiting for Redis. Notifications are only
 * hints: a woken waiter re-runs the atomic acquire, and every wait is also bounded by the
 * holder's remaining lease.
 *
 * <p>
 * Where SUBSCRIBE is refused (managed Redis, ACL without channel rights) it logs one WARN
 * and falls back to jittered exponential backoff.
 */
final class ReleaseWaiters implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ReleaseWaiters.class);

	/**
	 * Longest park while subscribed, in case a notification was lost (e.g. a reconnect).
	 */
	private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

	private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	private final AbstractRedisClient client;

	private final Duration timeout;

	private final Map<String, ArrayDeque<Waiter>> waiting = new ConcurrentHashMap<>();

	private volatile StatefulRedisPubSubConnection<byte[], byte[]> connection;

	private volatile boolean pubSubRefused;

	private volatile boolean closed;

	ReleaseWaiters(AbstractRedisClient client, Duration timeout) {
		this.client = client;
		this.timeout = timeout;
	}

	/** A thread waiting for one key. */
	final class Waiter {

		private final String key;

		private final Thread thread = Thread.currentThread();

		private volatile boolean signalled;

		private long backoffNanos = MIN_BACKOFF_NANOS;

		Waiter(String key) {
			this.key = key;
		}

		String key() {
			return this.key;
		}

		/**
		 * Parks until signalled, or {@code maxNanos}, or the holder's lease may have run
		 * out.
		 * @param holderTtlMillis the holder's remaining lease as the failed acquire saw
		 * it
		 */
		void await(long maxNanos, long holderTtlMillis) {
			long park = maxNanos;
			if (holderTtlMillis >= 0) {
				park = Math.min(park, TimeUnit.MILLISECONDS.toNanos(holderTtlMillis) + 1_000_000L);
			}
			if (ReleaseWaiters.this.pubSubRefused) {
				park = Math.min(park,
						ThreadLocalRandom.current().nextLong(this.backoffNanos / 2, this.backoffNanos + 1));
				this.backoffNanos = Math.min(MAX_BACKOFF_NANOS, this.backoffNanos * 2);
			}
			else {
				park = Math.min(park, RECHECK_NANOS);
			}
			long until = System.nanoTime() + park;
			while (!this.signalled && !Thread.currentThread().isInterrupted()) {
				long left = until - System.nanoTime();
				if (left <= 0) {
					break;
				}
				LockSupport.parkNanos(this, left);
			}
			this.signalled = false;
		}

		boolean signal() {
			if (this.signalled) {
				return false;
			}
			this.signalled = true;
			LockSupport.unpark(this.thread);
			return true;
		}

	}

	/**
	 * Registers the current thread as a waiter for the key; subscribes to its channel
	 * first when it is the key's first local waiter. Acquire once more after this before
	 * parking.
	 */
	Waiter register(String key) {
		Waiter waiter = new Waiter(key);
		Future<Void> subscribed = null;
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.computeIfAbsent(key, (k) -> new ArrayDeque<>());
			if (queue.isEmpty()) {
				subscribed = send(true, key);
			}
			queue.addLast(waiter);
		}
		if (subscribed != null) {
			awaitSubscription(subscribed);
		}
		return waiter;
	}

	void unregister(Waiter waiter) {
		boolean passOn;
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(waiter.key);
			if (queue == null || !queue.remove(waiter)) {
				return;
			}
			if (queue.isEmpty()) {
				this.waiting.remove(waiter.key);
				send(false, waiter.key);
			}
			passOn = waiter.signalled;
		}
		if (passOn) {
			released(waiter.key);
		}
	}

	/** The key was released: wake its longest-waiting local waiter. */
	void released(String key) {
		synchronized (this.waiting) {
			ArrayDeque<Waiter> queue = this.waiting.get(key);
			if (queue != null) {
				for (Waiter waiter : queue) {
					if (waiter.signal()) {
						return;
					}
				}
			}
		}
	}

	/** Channels subscribed now. */
	int subscriptions() {
		return this.waiting.size();
	}

	boolean pubSubRefused() {
		return this.pubSubRefused;
	}

	/**
	 * Sends SUBSCRIBE or UNSUBSCRIBE without waiting; call with the waiters' monitor held
	 * to keep their order.
	 */
	private Future<Void> send(boolean subscribe, String key) {
		if (this.pubSubRefused || this.closed) {
			return null;
		}
		byte[] channel = key.getBytes(StandardCharsets.UTF_8);
		try {
			if (subscribe) {
				return connection().async().subscribe(channel);
			}
			StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
			if (current != null) {
				current.async().unsubscribe(channel);
			}
		}
		catch (RuntimeException ex) {
			refused(ex);
		}
		return null;
	}

	private void awaitSubscription(Future<Void> subscribed) {
		try {
			subscribed.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			refused(ex);
		}
	}

	/**
	 * A refusal (no permission, unknown command) switches to polling for good; other
	 * failures are transient.
	 */
	private void refused(Exception ex) {
		Throwable cause = (ex instanceof ExecutionException && ex.getCause() != null) ? ex.getCause() : ex;
		String message = String.valueOf(cause.getMessage());
		boolean refusal = message.contains("NOPERM") || message.contains("unknown command")
				|| message.contains("not allowed");
		if (refusal && !this.pubSubRefused) {
			this.pubSubRefused = true;
			logger.warn("Redis refused SUBSCRIBE ({}); waiting for locks falls back to polling with jittered backoff",
					message);
		}
		else if (!refusal) {
			logger.debug("SUBSCRIBE did not complete ({}); waiters re-check periodically", message);
		}
	}

	private StatefulRedisPubSubConnection<byte[], byte[]> connection() {
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		if (current == null) {
			synchronized (this) {
				current = this.connection;
				if (current == null) {
					current = connect();
					current.setTimeout(this.timeout);
					current.addListener(new RedisPubSubAdapter<>() {
						@Override
						public void message(byte[] channel, byte[] message) {
							released(new String(channel, StandardCharsets.UTF_8));
						}
					});
					this.connection = current;
				}
			}
		}
		return current;
	}

	private StatefulRedisPubSubConnection<byte[], byte[]> connect() {
		if (this.client instanceof RedisClusterClient cluster) {
			return cluster.connectPubSub(ByteArrayCodec.INSTANCE);
		}
		return ((RedisClient) this.client).connectPubSub(ByteArrayCodec.INSTANCE);
	}

	@Override
	public void close() {
		this.closed = true;
		synchronized (this.waiting) {
			this.waiting.values().forEach((queue) -> queue.forEach(Waiter::signal));
		}
		StatefulRedisPubSubConnection<byte[], byte[]> current = this.connection;
		if (current != null) {
			if (current.isOpen()) {
				current.close();
			}
			this.connection = null;
		}
	}

}
