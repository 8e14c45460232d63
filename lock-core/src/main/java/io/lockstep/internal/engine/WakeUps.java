package io.lockstep.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * How the engine hears that a lock it waits for may be free: release notifications of
 * keys, and the hand-offs of locks to this client's queued waiters. The other half of a
 * deployment's seam, next to its {@link LockStore}; its news travels up through the
 * listeners set once, when the engine is built.
 */
public interface WakeUps extends AutoCloseable {

	/** Sets the listener told the key of every release notification. */
	void onRelease(Consumer<String> listener);

	/** Sets the listener told of the hand-offs to this client's waiters. */
	default void onHandOff(HandOffListener listener) {
	}

	/**
	 * Readies the channel (e.g. connects it); may block up to the command timeout, so it
	 * is never called under a lock that others need.
	 */
	void prepare();

	/**
	 * Starts delivering release notifications of the key; sends without waiting.
	 * @return completes when notifications flow (or immediately when they are
	 * unavailable)
	 */
	CompletableFuture<?> listen(String key);

	/** Stops delivering notifications of the key; sends without waiting. */
	void unlisten(String key);

	/** Waits, at most the command timeout, for {@link #listen} to take effect. */
	void await(CompletableFuture<?> listening);

	/** Whether release notifications work; {@code false} means waiters poll. */
	boolean notifies();

	/**
	 * Readies the delivery of hand-offs of the key to this client's waiters (a channel of
	 * the client's own, subscribed for its life and again whenever the subscription is
	 * lost); sends without waiting.
	 * @return completes when hand-offs flow (or immediately when they do already or are
	 * unavailable)
	 */
	default CompletableFuture<?> listenForHandOffs(String key) {
		return CompletableFuture.completedFuture(null);
	}

	/**
	 * Whether hand-offs of the key reach this client already ({@link #listenForHandOffs}
	 * took effect and the channel is open): then a caller may queue with its first
	 * attempt, before it registers as a waiter. Asks nothing of the storage.
	 */
	default boolean hearsHandOffs(String key) {
		return false;
	}

	/** Closes what this channel opened. */
	@Override
	void close();

	/** Told of a hand-off: the key now holds the owner's token with a fresh lease. */
	@FunctionalInterface
	interface HandOffListener {

		/**
		 * @param key the lock key
		 * @param owner the waiter's owner token
		 * @param fencingToken the lock's new fencing token
		 * @param leaseMillis the lease the key was given when handed off
		 */
		void handedOff(String key, String owner, long fencingToken, long leaseMillis);

	}

}
