package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * Where locks are stored: the one seam between the engine (leases, reentrancy, waiting,
 * renewal, observation) and a deployment. One implementation per deployment: a single
 * Redis master (standalone or Sentinel), Redlock over independent masters, and the
 * JVM-local one. Every operation is atomic on the storage side and checks the owner token
 * there.
 *
 * <p>
 * Blocking operations are bounded by {@link #commandTimeout()} and throw
 * {@link io.lockstep.LockException} when the storage does not answer in time.
 */
public interface LockBackend extends AutoCloseable {

	/**
	 * Tries once to acquire every key of the lock for the owner, all or nothing.
	 * @param leaseMillis the lease of the keys
	 * @param maxHoldMillis the hard cap on the hold from now, or 0 for none: no renewal
	 * extends the keys past it
	 */
	Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis);

	/**
	 * Like {@link #tryAcquire(LockId, String, long, long)}, for a caller that waits when
	 * the lock is held: the storage marks the held keys as waited for, so that their
	 * release notifies, and, where it {@link #handsOff hands off}, queues the owner of a
	 * one-key lock for a direct hand-off. The queue entry lives {@code entryMillis}
	 * unless the caller asks again first.
	 * @param handOffMillis the lease a hand-off to the queued owner grants (at most
	 * {@code leaseMillis}; shorter for a lease its watchdog extends, so that a waiter
	 * that vanished holds the lock up only that long)
	 * @param queued whether an earlier attempt of this owner may have queued it: one that
	 * gets the lock then also leaves the queue (a first attempt has nothing to leave)
	 */
	default Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis, long entryMillis,
			long handOffMillis, boolean queued) {
		return tryAcquire(id, owner, leaseMillis, maxHoldMillis);
	}

	/**
	 * Whether a release hands a one-key lock directly to its first queued waiter (a fresh
	 * lease and fencing token, told to the {@link #onHandOff listener}) instead of
	 * freeing it for whoever asks first.
	 */
	default boolean handsOff() {
		return false;
	}

	/** Sets the listener told of the hand-offs to this client's waiters. */
	default void onHandOff(HandOffListener listener) {
	}

	/**
	 * Readies the delivery of hand-offs of the key to this client's waiters (a channel of
	 * the client's own, subscribed once for its life); sends without waiting.
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

	/**
	 * A queued waiter gives up: it leaves the lock's queue and releases the lock if it
	 * was handed to it meanwhile; sends without waiting.
	 */
	default void leave(LockId id, String owner) {
		releaseQuietly(id, owner);
	}

	/**
	 * Like {@link #tryAcquire(LockId, String, long, long, long, long, boolean)} without
	 * blocking the caller: the future completes with the attempt, or exceptionally with a
	 * {@link io.lockstep.LockException} (bounded by the command timeout, like the
	 * blocking attempt). It may complete on the storage client's I/O thread: the engine
	 * moves on to its own threads before running anything else. The default runs the
	 * blocking attempt on {@code blocking}, a thread of the engine that may block;
	 * backends with an asynchronous client override it.
	 * @param blocking where the default runs the blocking attempt
	 */
	default CompletableFuture<Attempt> tryAcquireAsync(LockId id, String owner, long leaseMillis, long maxHoldMillis,
			long entryMillis, long handOffMillis, boolean queued, Executor blocking) {
		return CompletableFuture.supplyAsync(
				() -> tryAcquire(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis, queued), blocking);
	}

	/**
	 * Renews many leases in as few round trips as the storage allows; never blocks.
	 * @return per renewal, in order: the lease granted in milliseconds ({@code > 0}),
	 * {@code 0} when a key is gone or held by another owner, or {@code -1} when the
	 * max-hold cap allows no extension
	 */
	CompletableFuture<long[]> renew(List<Renewal> renewals);

	/**
	 * Deletes the keys that still hold the owner's token and notifies their waiters.
	 * @return the number of keys deleted
	 */
	int release(LockId id, String owner);

	/**
	 * Leaves the keys that still hold the owner's token to expire {@code ttlMillis} from
	 * now (never past their max-hold cap) instead of deleting them, and lowers their cap
	 * to that moment, so that no renewal sent earlier extends them. Waiters are not told:
	 * the keys are still taken. Keys held by another owner are left untouched.
	 * @return the number of keys that held the owner's token
	 */
	int keep(LockId id, String owner, long ttlMillis);

	/** Like {@link #release} but without waiting for the reply; for undoing. */
	void releaseQuietly(LockId id, String owner);

	/** The number of the lock's keys that hold the owner's token now; changes nothing. */
	int check(LockId id, String owner);

	/** The remaining lease of a key held by anyone, in ms; negative when not held. */
	long remainingLease(String key);

	/**
	 * Asks the storage one cheap question, as a health check: whether it answers and
	 * could grant a lock. Default: the remaining lease of the key.
	 * @throws io.lockstep.LockException when it does not answer in time, fails, or
	 * refuses locks
	 */
	default void ping(String key) {
		remainingLease(key);
	}

	/** The bound on every blocking operation. */
	Duration commandTimeout();

	/**
	 * The clock-drift allowance subtracted from a lease granted by this storage: the
	 * holder's local deadline is the send time of the acquire (or renewal) plus the lease
	 * minus this, so it never lies after the storage's own expiry. Default: 1% of the
	 * lease plus 2 ms, as in the Redlock reference.
	 */
	default long driftNanos(long leaseNanos) {
		return leaseNanos / 100 + 2_000_000L;
	}

	/**
	 * Readies the notification channel (e.g. connects it); may block up to the command
	 * timeout, so it is never called under a lock that others need.
	 */
	void prepareListening();

	/**
	 * Starts delivering release notifications of the key to the listener given to
	 * {@link #onRelease}; sends without waiting.
	 * @return completes when notifications flow (or immediately when they are
	 * unavailable)
	 */
	CompletableFuture<?> listen(String key);

	/** Waits, at most the command timeout, for {@link #listen} to take effect. */
	void awaitListening(CompletableFuture<?> listening);

	/** Stops delivering notifications of the key; sends without waiting. */
	void unlisten(String key);

	/** Sets the listener told the key of every release notification. */
	void onRelease(Consumer<String> listener);

	/** Whether release notifications work; {@code false} means waiters poll. */
	boolean notifies();

	/** Closes the connections this backend opened (never a client it was given). */
	@Override
	void close();

	/**
	 * The result of one acquire attempt.
	 *
	 * @param acquired whether every key is held by the owner now
	 * @param fencingTokens the fencing token of each key, in key order, when acquired;
	 * when a one-key lock is held by another owner, the key's fencing counter as the
	 * attempt left it (a hand-off granted after the attempt has a larger token), if the
	 * storage tells it
	 * @param holderTtlMillis when not acquired: the longest remaining lease of the keys
	 * held by others (negative when unknown)
	 * @param blockingIndex when not acquired: the index of the first key held by another
	 * owner
	 * @param grantedMillis when acquired: the lease the storage set, when it is shorter
	 * than the one asked for (a key that held the owner's token already, within its
	 * max-hold cap); negative for the lease asked for
	 */
	record Attempt(boolean acquired, long[] fencingTokens, long holderTtlMillis, int blockingIndex,
			long grantedMillis) {

		public static Attempt acquired(long[] fencingTokens) {
			return new Attempt(true, fencingTokens, -1, -1, -1);
		}

		/** Acquired with the lease the storage set. */
		public static Attempt acquired(long[] fencingTokens, long grantedMillis) {
			return new Attempt(true, fencingTokens, -1, -1, grantedMillis);
		}

		public static Attempt held(long holderTtlMillis, int blockingIndex) {
			return new Attempt(false, null, holderTtlMillis, blockingIndex, -1);
		}

		/** Held, with the key's fencing counter as the attempt left it. */
		public static Attempt held(long holderTtlMillis, int blockingIndex, long fencingCounter) {
			return new Attempt(false, new long[] { fencingCounter }, holderTtlMillis, blockingIndex, -1);
		}

		/** When held: the key's fencing counter as the attempt left it, or -1. */
		public long fencingCounter() {
			return (!this.acquired && this.fencingTokens != null) ? this.fencingTokens[0] : -1;
		}

	}

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

	/**
	 * One lease to renew.
	 *
	 * @param id the lock
	 * @param owner the owner token
	 * @param leaseMillis the lease to grant, at most
	 */
	record Renewal(LockId id, String owner, long leaseMillis) {
	}

}
