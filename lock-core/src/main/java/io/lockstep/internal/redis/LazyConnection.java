package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import javax.net.ssl.SSLException;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lockstep.LockException;

/**
 * One Redis connection, opened on first use and never by blocking the caller: the
 * connection attempt runs on a thread of its own ({@code lockstep-connect}), one at a
 * time, and commands sent meanwhile wait for it in order. So the caller's bound on a
 * command covers connecting too: a Redis that accepts the TCP connection but does not
 * answer (stopped by SIGSTOP) would otherwise hold the caller for the Lettuce client's
 * own, much longer, timeout. A failed attempt fails the waiting commands, and the next
 * command tries again, so locking resumes once Redis answers.
 */
final class LazyConnection implements AutoCloseable {

	private final AbstractRedisClient client;

	private final Duration timeout;

	private volatile RedisClusterAsyncCommands<byte[], byte[]> commands;

	/** Commands sent before the connection was made, in order; guarded by this. */
	private final List<Queued<?>> queued = new ArrayList<>();

	private StatefulConnection<byte[], byte[]> connection;

	private boolean connecting;

	private boolean closed;

	/**
	 * @param timeout the timeout of every command of the connection, once open
	 */
	LazyConnection(AbstractRedisClient client, Duration timeout) {
		if (!(client instanceof RedisClusterClient) && !(client instanceof RedisClient)) {
			throw new IllegalArgumentException("Unsupported Lettuce client " + client.getClass().getName());
		}
		this.client = client;
		this.timeout = timeout;
	}

	/** Whether the connection is made (Lettuce reconnects it by itself from then on). */
	boolean isConnected() {
		return this.commands != null;
	}

	/**
	 * Sends a command; never blocks. Without a connection yet the command waits for it:
	 * it is never sent when its reply is done by then (the caller gave up and cancelled
	 * it), and waiting commands reach Redis in the order they were sent, before any later
	 * one.
	 */
	<T> CompletableFuture<T> send(Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletionStage<T>> command) {
		RedisClusterAsyncCommands<byte[], byte[]> current = this.commands;
		if (current == null) {
			synchronized (this) {
				if (this.closed) {
					return CompletableFuture.failedFuture(new LockException("The lock client is closed"));
				}
				current = this.commands;
				if (current == null) {
					Queued<T> waiting = new Queued<>(command, new CompletableFuture<>());
					this.queued.add(waiting);
					if (!this.connecting) {
						this.connecting = true;
						Thread thread = new Thread(this::connect, "lockstep-connect");
						thread.setDaemon(true);
						thread.start();
					}
					return waiting.reply();
				}
			}
		}
		return command.apply(current).toCompletableFuture();
	}

	private void connect() {
		StatefulConnection<byte[], byte[]> opened;
		RedisClusterAsyncCommands<byte[], byte[]> async;
		try {
			if (this.client instanceof RedisClusterClient cluster) {
				var clusterConnection = cluster.connect(ByteArrayCodec.INSTANCE);
				opened = clusterConnection;
				async = clusterConnection.async();
			}
			else {
				var standaloneConnection = ((RedisClient) this.client).connect(ByteArrayCodec.INSTANCE);
				opened = standaloneConnection;
				async = standaloneConnection.async();
			}
			opened.setTimeout(this.timeout);
		}
		catch (RuntimeException ex) {
			failQueued(new LockException("Cannot connect to Redis: " + ex.getMessage() + reason(ex), ex));
			return;
		}
		synchronized (this) {
			if (!this.closed) {
				this.connection = opened;
				// a reply that completes at once may send again from here (EVAL after a
				// NOSCRIPT): that command is queued behind, and sent in the next round
				while (!this.queued.isEmpty()) {
					List<Queued<?>> round = List.copyOf(this.queued);
					this.queued.clear();
					round.forEach((waiting) -> waiting.send(async));
				}
				this.connecting = false;
				this.commands = async;
				return;
			}
		}
		opened.close();
		failQueued(new LockException("The lock client is closed"));
	}

	private void failQueued(LockException failure) {
		List<Queued<?>> failed;
		synchronized (this) {
			this.connecting = false;
			failed = List.copyOf(this.queued);
			this.queued.clear();
		}
		failed.forEach((waiting) -> waiting.reply().completeExceptionally(failure));
	}

	@Override
	public void close() {
		StatefulConnection<byte[], byte[]> open;
		synchronized (this) {
			this.closed = true;
			open = this.connection;
		}
		// closing waits for the connection: outside the monitor. The client may have been
		// shut down first (its factory stopped): then the connection is closed already
		if (open != null && open.isOpen()) {
			open.close();
		}
		failQueued(new LockException("The lock client is closed"));
	}

	/**
	 * A command waiting for the connection.
	 *
	 * @param command sends it
	 * @param reply its reply; done already when the caller gave up
	 */
	private record Queued<T>(Function<RedisClusterAsyncCommands<byte[], byte[]>, CompletionStage<T>> command,
			CompletableFuture<T> reply) {

		void send(RedisClusterAsyncCommands<byte[], byte[]> commands) {
			if (this.reply.isDone()) {
				return;
			}
			try {
				this.command.apply(commands).whenComplete((value, failure) -> complete(this.reply, value, failure));
			}
			catch (RuntimeException ex) {
				this.reply.completeExceptionally(ex);
			}
		}

	}

	/**
	 * Why a connection failed, when the client's own message does not say: a TLS
	 * handshake (an untrusted certificate, say) or the root cause.
	 */
	private static String reason(Throwable failure) {
		Throwable root = failure;
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SSLException) {
				return " (TLS handshake failed: " + cause.getMessage() + ")";
			}
			root = cause;
		}
		return (root != failure) ? " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")" : "";
	}

	/** Completes {@code result} as the reply completed. */
	static <T> void complete(CompletableFuture<T> result, T value, Throwable failure) {
		if (failure == null) {
			result.complete(value);
		}
		else {
			result.completeExceptionally(failure);
		}
	}

}
