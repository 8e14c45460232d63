package io.lockstep.redlock;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.PubSubChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * One independent Redis master of a Redlock: its own lock connection
 * ({@link LockCommands}) and its own release notifications ({@link PubSubChannel}).
 *
 * <p>
 * Commands never block the caller: until the connection is open they queue, in order, on
 * a connecting thread, so that a node that is down or paused while connecting only costs
 * its own vote. Commands to one node reach it in the order they were sent (one
 * connection, one queue). A command whose caller stopped waiting (its reply timed out or
 * was cancelled) is dropped before it is sent, and not sent again after a
 * {@code NOSCRIPT}; a release or an undo waiting for the node's connection is sent all
 * the same (but not again after a {@code NOSCRIPT} once its reply is cancelled). A script
 * the node does not have cached ({@code NOSCRIPT}: its first run there, a restart,
 * {@code SCRIPT FLUSH}) runs one round trip late, after commands sent behind it: where
 * that order matters, the sender cancels the earlier reply before it sends what follows
 * ({@link Acquisitions}).
 */
final class Node implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(Node.class);

	private final String name;

	private final LockCommands commands;

	private final PubSubChannel channel;

	private final Executor connector;

	/** The tail of the commands waiting for the connection; guarded by {@code this}. */
	private CompletableFuture<Void> queue = CompletableFuture.completedFuture(null);

	private volatile boolean refusing;

	/**
	 * Whether its {@code appendfsync} was asked (once, when it was first found
	 * persisting).
	 */
	private final AtomicBoolean fsyncChecked = new AtomicBoolean();

	Node(String name, AbstractRedisClient client, Duration commandTimeout, Executor connector) {
		this.name = name;
		this.commands = new LockCommands(client, commandTimeout);
		this.channel = new PubSubChannel(client, commandTimeout);
		this.connector = connector;
	}

	/** {@code redis://host:port}, or the node's position when only a client was given. */
	String name() {
		return this.name;
	}

	boolean isConnected() {
		return this.commands.isConnected();
	}

	/** Starts connecting in the background, if not connected yet. */
	void connect() {
		if (!isConnected()) {
			run((commands) -> {
				commands.open();
				return CompletableFuture.completedFuture(null);
			}, false, this.commands.timeout());
		}
	}

	/** Runs a script on this node; the reply fails after {@code timeout}. */
	<T> CompletableFuture<T> eval(RedisScript<?> script, List<String> keys, List<String> args, boolean always,
			Duration timeout) {
		return run((commands) -> commands.evalAsync(script, keys, args), always, timeout);
	}

	CompletableFuture<Long> pttl(String key, Duration timeout) {
		return run((commands) -> commands.pttlAsync(key), false, timeout);
	}

	/**
	 * @param always whether to send the command even when its caller stopped waiting (a
	 * release)
	 */
	private <T> CompletableFuture<T> run(Function<LockCommands, CompletableFuture<T>> command, boolean always,
			Duration timeout) {
		CompletableFuture<T> reply = new CompletableFuture<>();
		synchronized (this) {
			if (this.queue.isDone() && this.commands.isConnected()) {
				send(command, reply);
			}
			else {
				this.queue = this.queue.handleAsync((ignored, failure) -> {
					if (always || !reply.isDone()) {
						send(command, reply);
					}
					return null;
				}, this.connector);
			}
		}
		return reply.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS);
	}

	private <T> void send(Function<LockCommands, CompletableFuture<T>> command, CompletableFuture<T> reply) {
		CompletableFuture<T> sent;
		try {
			sent = command.apply(this.commands);
		}
		catch (RuntimeException ex) {
			reply.completeExceptionally(ex);
			return;
		}
		sent.whenComplete((value, failure) -> {
			if (failure != null) {
				reply.completeExceptionally(failure);
			}
			else {
				reply.complete(value);
			}
		});
		// a reply that timed out or was cancelled ends the command too, under the lock
		// the retry (EVAL after NOSCRIPT) is sent under: none is sent once the caller
		// gave up, and one being sent is on the connection before the caller goes on
		reply.whenComplete((value, failure) -> {
			synchronized (sent) {
				sent.cancel(false);
			}
		});
	}

	// --- release notifications
	// -------------------------------------------------------------

	PubSubChannel channel() {
		return this.channel;
	}

	/** Opens the notification connection in the background, if not open yet. */
	CompletableFuture<Void> prepareListening() {
		if (this.channel.isConnected() || !this.channel.notifies()) {
			return CompletableFuture.completedFuture(null);
		}
		return CompletableFuture.runAsync(this.channel::prepare, this.connector);
	}

	/** Subscribes to the key's releases; fails at once while not connected. */
	CompletableFuture<?> listen(String key) {
		if (!this.channel.isConnected()) {
			return CompletableFuture.failedFuture(new LockException(this.name + " is not connected for notifications"));
		}
		return this.channel.subscribe(key);
	}

	// --- the restart rule
	// ------------------------------------------------------------------

	/**
	 * Asks the node whether it persists its data ({@code INFO persistence} says
	 * {@code aof_enabled:1}, the test the acquire script makes) and records the answer (a
	 * node that does not is logged at ERROR, once). Waits for the connection like any
	 * command.
	 * @return completes with the answer, or fails after {@code timeout}
	 */
	CompletableFuture<Boolean> checkPersistence(Duration timeout) {
		return this.<String>run((commands) -> commands.infoAsync("persistence"), false, timeout)
			.thenApply((info) -> info.contains("aof_enabled:1"))
			.whenComplete((persists, failure) -> {
				if (failure == null) {
					refusing(!persists);
				}
			});
	}

	/**
	 * The node refused to vote because it does not persist its data: logged once, until
	 * it persists again.
	 */
	void refusing(boolean refusing) {
		if (refusing && !this.refusing) {
			logger
				.error("Redlock node {} does not persist its data (INFO persistence: aof_enabled:0): it takes no part "
						+ "in any lock until it runs with appendonly yes (appendfsync always), because a node that "
						+ "restarts empty could grant a lock that a quorum still holds", this.name);
		}
		else if (!refusing && this.refusing) {
			logger.info("Redlock node {} persists its data again and takes part in locks", this.name);
		}
		this.refusing = refusing;
		if (!refusing && this.fsyncChecked.compareAndSet(false, true)) {
			checkFsync();
		}
	}

	/**
	 * Warns (once) when the node syncs its append-only file less often than every write.
	 * With {@code appendfsync everysec} (Redis's default) a crash of the node's machine
	 * (power loss, kernel panic; not a crash of the Redis process alone) can lose up to
	 * the last second of acknowledged writes, among them a lock granted just before: the
	 * node restarts without it and may grant it again. Not refused: {@code CONFIG} cannot
	 * run inside the acquire script, so the setting could not be checked atomically, and
	 * the risk is closed as well by keeping a crashed node down for longer than the
	 * longest lease before restarting it.
	 */
	private void checkFsync() {
		this.commands.configAsync("appendfsync").whenComplete((fsync, failure) -> {
			if (failure != null) {
				logger.debug("Could not read appendfsync of Redlock node {}: {}", this.name, failure.getMessage());
			}
			else if (!"always".equals(fsync)) {
				logger.warn("Redlock node {} persists with appendfsync {}: if its machine crashes (power loss, kernel "
						+ "panic), up to {} of acknowledged writes can be lost, among them a lock it granted just "
						+ "before, which it may grant again after the restart; use appendfsync always, or keep a "
						+ "crashed node down for longer than the longest lease before restarting it", this.name, fsync,
						"no".equals(fsync) ? "the last 30 s (the operating system's flush interval)" : "1 s");
			}
		});
	}

	@Override
	public void close() {
		this.channel.close();
		this.commands.close();
	}

	@Override
	public String toString() {
		return this.name;
	}

}
