package io.lockstep.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lockstep.LockException;
import io.lockstep.internal.DurationFormat;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The lock's own Redis connection ({@link LazyConnection}: opened on first use), on which
 * the Lua scripts ({@link LockScripts}) run by EVALSHA (EVAL once after a NOSCRIPT, e.g.
 * after a Redis restart). Every call is bounded by a timeout, connecting included.
 */
public final class LockCommands implements AutoCloseable {

	private static final byte[][] NO_KEYS = new byte[0][];

	private final Duration timeout;

	private final LazyConnection connection;

	/**
	 * Connects on first use, so that an application starts while Redis is down and locks
	 * once it answers.
	 */
	public LockCommands(AbstractRedisClient client, Duration timeout) {
		this.connection = new LazyConnection(client, timeout);
		this.timeout = timeout;
	}

	public Duration timeout() {
		return this.timeout;
	}

	/**
	 * Whether the connection is open already, so that a command is sent without blocking
	 * (Lettuce reconnects it by itself from then on).
	 */
	public boolean isConnected() {
		return this.connection.isConnected();
	}

	/**
	 * Starts connecting if not connected yet and waits for it, at most the command
	 * timeout; a connection not made by then goes on in the background.
	 */
	public void open() {
		try {
			await(this.connection.send((commands) -> commands.ping()), "connect");
		}
		catch (LockException ex) {
			// not connected yet: later commands wait for the connection, or fail clearly
		}
	}

	/**
	 * Starts connecting in the background, so that the first lock does not pay for the
	 * connection within its command timeout; never blocks. A Redis that does not answer
	 * yet is tried again by the first command.
	 */
	public void connectSoon() {
		this.connection.send((commands) -> commands.ping());
	}

	/**
	 * Whether a command's failure is Redis's error reply (it answered, and refused or
	 * failed the command: sending it again would be refused again), not a timeout or a
	 * lost connection.
	 */
	public static boolean refused(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof io.lettuce.core.RedisCommandExecutionException) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	/** Runs a script and returns the future of its reply; never blocks. */
	public <T> CompletableFuture<T> evalAsync(RedisScript<?> script, List<String> keys, List<String> args) {
		byte[][] keyBytes = toBytes(keys);
		byte[][] argBytes = toBytes(args);
		ScriptOutputType type = (script.getResultType() == Long.class) ? ScriptOutputType.INTEGER
				: ScriptOutputType.MULTI;
		CompletableFuture<T> result = new CompletableFuture<>();
		// Sent only while the caller still waits (await cancels the result under
		// the same lock), once connected or again by EVAL after a NOSCRIPT: a
		// command never reaches Redis after what its caller sent to undo it.
		this.connection
			.send((commands) -> unlessAbandoned(result,
					() -> commands.<T>evalsha(script.getSha1(), type, keyBytes, argBytes)))
			.whenComplete((value, failure) -> {
				if (failure == null) {
					result.complete(value);
				}
				else if (isNoScript(failure)) {
					this.connection
						.send((commands) -> unlessAbandoned(result,
								() -> commands.<T>eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8),
										type, keyBytes, argBytes)))
						.whenComplete((retried, again) -> LazyConnection.complete(result, retried, again));
				}
				else {
					result.completeExceptionally(failure);
				}
			});
		return result;
	}

	/**
	 * Runs a script without blocking, bounded like {@link #eval}: the future fails with a
	 * {@link LockException} when Redis fails or does not answer within the command
	 * timeout (a command still waiting for the connection then is never sent, as in
	 * {@link #await}). Cancelling the future drops the command the same way: not sent if
	 * still waiting for the connection, and not sent again after a {@code NOSCRIPT}. It
	 * may complete on the client's I/O thread.
	 */
	public <T> CompletableFuture<T> evalBounded(RedisScript<?> script, List<String> keys, List<String> args,
			Supplier<String> what) {
		CompletableFuture<T> reply = evalAsync(script, keys, args);
		CompletableFuture<T> result = new CompletableFuture<>();
		ScheduledFuture<?> timeout = CommandTimeouts.schedule(() -> {
			synchronized (reply) {
				if (!reply.isDone()) {
					reply.completeExceptionally(new TimeoutException());
				}
			}
		}, this.timeout);
		reply.whenComplete((value, failure) -> {
			// the timeout task goes with its command: under load, tasks left behind
			// would each keep a command and its reply for the whole timeout
			timeout.cancel(false);
			if (failure == null) {
				result.complete(value);
			}
			else if (failure instanceof TimeoutException) {
				result.completeExceptionally(new LockException(
						"Redis did not answer within " + DurationFormat.format(this.timeout) + " to " + what.get(),
						failure));
			}
			else {
				result.completeExceptionally(new LockException(
						"Redis failed to " + what.get() + ": " + ScriptTexts.explain(failure.getMessage()), failure));
			}
		});
		result.whenComplete((value, failure) -> {
			if (result.isCancelled()) {
				synchronized (reply) {
					reply.cancel(false);
				}
			}
		});
		return result;
	}

	/**
	 * Runs a script and waits for its reply, at most the command timeout; {@code what}
	 * names it in the message of a failure, and is worked out only then.
	 */
	public <T> T eval(RedisScript<?> script, List<String> keys, List<String> args, Supplier<String> what) {
		return await(evalAsync(script, keys, args), what);
	}

	/**
	 * Runs a script and waits for its reply, at most the command timeout, which
	 * {@code onReply} is given first, on the thread that reads it (before the caller is
	 * woken). A script not answered in time is not sent any more, or its reply dropped
	 * without {@code onReply}.
	 */
	public <T> T eval(RedisScript<?> script, List<String> keys, List<String> args, Supplier<String> what,
			Consumer<T> onReply) {
		CompletableFuture<T> reply = evalAsync(script, keys, args);
		try {
			return await(reply.thenApply((answer) -> {
				onReply.accept(answer);
				return answer;
			}), what);
		}
		catch (LockException ex) {
			synchronized (reply) {
				reply.cancel(false);
			}
			throw ex;
		}
	}

	/**
	 * {@code WAIT replicas timeout}: the number of replicas that acknowledged every write
	 * of this connection so far.
	 */
	public long waitForReplicas(int replicas, Duration timeout) {
		return await(this.connection.send((commands) -> commands.waitForReplication(replicas, timeout.toMillis())),
				"confirm replication (WAIT)");
	}

	/**
	 * Whether the server runs {@code SPUBLISH} (sharded pub/sub): asks it, with a message
	 * to a channel nobody hears, rather than reading a version string (Valkey 8 reports
	 * {@code redis_version:7.2.4}). An error reply (an unknown command, or a command the
	 * ACL refuses) is {@code false}, with its text in {@code why}.
	 * @throws io.lockstep.LockException when the server does not answer in time
	 */
	public boolean runsSpublish(String channel, Consumer<String> why) {
		try {
			await(this.connection
				.send((commands) -> commands.spublish(channel.getBytes(StandardCharsets.UTF_8), new byte[0])),
					"publish a sharded message");
			return true;
		}
		catch (LockException ex) {
			if (refused(ex)) {
				why.accept(ex.getMessage());
				return false;
			}
			throw ex;
		}
	}

	/** The {@code redis_version} of the server (in a Cluster: of the node asked). */
	public String serverVersion() {
		String info = await(this.connection.send((commands) -> commands.info("server")), "report its version");
		return info.lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.map((line) -> line.substring("redis_version:".length()).trim())
			.findFirst()
			.orElse("unknown");
	}

	/**
	 * The value of one configuration parameter ({@code CONFIG GET}), {@code null} when
	 * the server has no such parameter; fails where {@code CONFIG} is not allowed.
	 */
	public CompletableFuture<String> configAsync(String parameter) {
		return this.connection.send((commands) -> commands.configGet(parameter))
			.thenApply((values) -> values.get(parameter));
	}

	/**
	 * {@code INFO <section>} of the server (in a Cluster: of the node asked); never
	 * blocks.
	 */
	public CompletableFuture<String> infoAsync(String section) {
		return this.connection.send((commands) -> commands.info(section));
	}

	public long pttl(String key) {
		return await(this.connection.send((commands) -> commands.pttl(key.getBytes(StandardCharsets.UTF_8))),
				"read the lease of '" + key + "'");
	}

	/**
	 * The remaining lease of a key in ms (negative when it does not exist); never blocks
	 * once connected.
	 */
	public CompletableFuture<Long> pttlAsync(String key) {
		return this.connection.send((commands) -> commands.pttl(key.getBytes(StandardCharsets.UTF_8)));
	}

	public <T> T await(CompletableFuture<T> future, String what) {
		return await(future, () -> what);
	}

	/**
	 * Waits for a reply, at most the command timeout; {@code what} names the command in
	 * the message of a failure, and is worked out only then.
	 */
	public <T> T await(CompletableFuture<T> future, Supplier<String> what) {
		try {
			return future.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			synchronized (future) {
				future.cancel(false);
			}
			throw new LockException(
					"Redis did not answer within " + DurationFormat.format(this.timeout) + " to " + what.get(), ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new LockException("Redis failed to " + what.get() + ": " + ScriptTexts.explain(cause.getMessage()),
					cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			synchronized (future) {
				future.cancel(false);
			}
			throw new LockException("Interrupted while waiting for Redis to " + what.get(), ex);
		}
	}

	@Override
	public void close() {
		this.connection.close();
	}

	/** Sends unless the caller gave up; then nothing is sent. */
	private static <T> CompletionStage<T> unlessAbandoned(CompletableFuture<T> result,
			Supplier<CompletionStage<T>> command) {
		synchronized (result) {
			return result.isDone() ? new CompletableFuture<>() : command.get();
		}
	}

	private static boolean isNoScript(Throwable failure) {
		Throwable current = failure;
		while (current != null) {
			if (current instanceof RedisNoScriptException
					|| (current.getMessage() != null && current.getMessage().startsWith("NOSCRIPT"))) {
				return true;
			}
			current = current.getCause();
		}
		return false;
	}

	private static byte[][] toBytes(List<String> values) {
		if (values.isEmpty()) {
			return NO_KEYS;
		}
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return bytes;
	}

}
