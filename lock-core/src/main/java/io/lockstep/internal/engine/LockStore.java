package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

/**
 * Where locks are stored: the seam between the engine (leases, reentrancy, waiting,
 * renewal, observation) and a deployment, next to its {@link WakeUps wake-up channel}.
 * One implementation per deployment: one Redis store for a single master, Sentinel and
 * Cluster, Redlock over independent masters, and the JVM-local one. Every operation is
 * atomic on the storage side and checks the owner token there.
 *
 * <p>
 * Blocking operations are bounded by {@link #commandTimeout()} and throw
 * {@link io.lockstep.LockException} when the storage does not answer in time.
 *
 * <p>
 * Over 300 lines for a reason: the seam's requests and replies are records here, each
 * documented for the stores that implement it; about a third of the file is code.
 */
public interface LockStore extends AutoCloseable {

	/** Tries once to acquire every key of the lock for the owner, all or nothing. */
	Attempt acquire(Acquire request);

	/**
	 * Like {@link #acquire} without blocking the caller: the future completes with the
	 * attempt, or exceptionally with a {@link io.lockstep.LockException} (bounded by the
	 * command timeout, like the blocking attempt). It may complete on the storage
	 * client's I/O thread: the engine moves on to its own threads before running anything
	 * else. The default runs the blocking attempt on {@code blocking}, a thread of the
	 * engine that may block; stores with an asynchronous client override it. The engine
	 * cancels the future before it undoes an attempt it gave up: a store that can drops
	 * then what it has not sent (the Redis store: a later slot's script, a script sent
	 * again after {@code NOSCRIPT}), so that the undo runs after all of the attempt.
	 * @param blocking where the default runs the blocking attempt
	 */
	default CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		return CompletableFuture.supplyAsync(() -> acquire(request), blocking);
	}

	/**
	 * Renews many leases in as few round trips as the storage allows; never blocks.
	 * @return per renewal, in order: the lease granted in milliseconds ({@code > 0}),
	 * {@code 0} when a key is gone or held by another owner, or {@code -1} when the
	 * max-hold cap allows no extension
	 */
	CompletableFuture<long[]> renew(List<Renewal> renewals);

	/**
	 * Ends the owner's hold of the lock's keys (never another owner's) as the request's
	 * {@link Release.Mode mode} says.
	 * @return for {@link Release.Mode#RELEASE} and {@link Release.Mode#KEEP}, which wait
	 * for the reply: the number of keys that held the owner's token; for the others,
	 * which send without waiting: {@code -1}
	 */
	int release(Release request);

	/**
	 * Sends a release without blocking the caller, in order after what the caller sent
	 * before (an undo reaches the storage after the attempt it undoes): the future
	 * completes with the number of keys that held the owner's token once the storage
	 * answered ({@code -1} when it refused the command with an error reply: sending it
	 * again would be refused again), or exceptionally when it failed otherwise or did not
	 * answer within the command timeout — then the command either ran or will never be
	 * sent, so the caller may send it again (every mode is token-checked: repeating one
	 * is harmless). Default: {@link #release} on the calling thread.
	 */
	default CompletableFuture<Integer> send(Release request) {
		try {
			return CompletableFuture.completedFuture(release(request));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

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
	 * Whether a release hands a one-key lock directly to its first queued waiter (a fresh
	 * lease and fencing token, told through the wake-up channel) instead of freeing it
	 * for whoever asks first.
	 */
	default boolean handsOff() {
		return false;
	}

	/**
	 * Whether a release of a one-key lock that {@link #handsOff hands off} may name a
	 * {@link Successor}: a waiter of this client that the storage hands the lock to when
	 * no one is queued for it there, told by the release's reply instead of a message.
	 */
	default boolean handsToSuccessors() {
		return false;
	}

	/**
	 * A release of a one-key lock ({@link Release#of}) that, where the store
	 * {@link #handsToSuccessors hands locks to successors} and no one is queued for the
	 * lock in the storage, hands it to the successor instead.
	 * @param successor the successor, or {@code null} for none
	 * @return as {@link #release(Release)}
	 */
	default int release(Release request, @Nullable Successor successor) {
		return release(request);
	}

	/**
	 * A waiter of this client that a release may hand its lock to
	 * ({@link #release(Release, Successor)}).
	 *
	 * @param owner the waiter's owner token
	 * @param leaseMillis the lease it is handed, its hand-off lease
	 * @param handed told the fencing token when the storage handed the lock to it, on the
	 * thread that reads the reply and before the release returns; must not throw
	 */
	record Successor(String owner, long leaseMillis, LongConsumer handed) {
	}

	/**
	 * Whether the store keeps read locks and semaphores ({@link Sharing} other than
	 * exclusive): several holders of one key, each with its own lease and fencing token.
	 */
	default boolean shares() {
		return false;
	}

	/** Whether other processes share these locks; {@code false} for a JVM-local store. */
	default boolean isDistributed() {
		return true;
	}

	/** Closes the connections this store opened (never a client it was given). */
	@Override
	void close();

	/**
	 * What the keys an attempt takes are held on, whatever the attempt: the same for
	 * every attempt of one acquisition.
	 *
	 * @param leaseMillis the lease of the keys
	 * @param maxHoldMillis the hard cap on the hold from now, or 0 for none: no renewal
	 * extends the keys past it
	 * @param handOffMillis the lease a hand-off to the queued owner grants (at most
	 * {@code leaseMillis}; shorter for a lease its watchdog extends, so that a waiter
	 * that vanished holds the lock up only that long)
	 * @param delayMillis the lock delay: how long the keys stay unavailable after a lease
	 * that ends without a release (stored with the grant, also one handed off to this
	 * owner), or 0
	 */
	record LeaseTerms(long leaseMillis, long maxHoldMillis, long handOffMillis, long delayMillis) {
	}

	/**
	 * One acquire attempt.
	 *
	 * @param id the lock
	 * @param owner the owner token
	 * @param terms the lease, max-hold cap, hand-off lease and lock delay of the keys
	 * @param entryMillis for a caller that waits when the lock is held: how long its mark
	 * on the held keys (so that their release notifies) and, where the store
	 * {@link #handsOff() hands off}, the queue entry of a one-key lock's owner live
	 * unless it asks again first; 0 for a caller that does not wait
	 * @param queued whether an earlier attempt of this owner may have queued it: one that
	 * gets the lock then also leaves the queue (a first attempt has nothing to leave)
	 */
	record Acquire(LockId id, String owner, LeaseTerms terms, long entryMillis, boolean queued) {

		/** One attempt of a caller that does not wait, without a lock delay. */
		public static Acquire once(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
			return new Acquire(id, owner, new LeaseTerms(leaseMillis, maxHoldMillis, leaseMillis, 0), 0, false);
		}

		/** Whether the caller waits when the lock is held (marks or queues). */
		public boolean waits() {
			return this.entryMillis > 0;
		}

		/** The lease of the keys ({@link LeaseTerms#leaseMillis}). */
		public long leaseMillis() {
			return this.terms.leaseMillis();
		}

		/** The max-hold cap from now, or 0 ({@link LeaseTerms#maxHoldMillis}). */
		public long maxHoldMillis() {
			return this.terms.maxHoldMillis();
		}

		/** The lease of a hand-off to the owner ({@link LeaseTerms#handOffMillis}). */
		public long handOffMillis() {
			return this.terms.handOffMillis();
		}

		/** The lock delay, or 0 ({@link LeaseTerms#delayMillis}). */
		public long delayMillis() {
			return this.terms.delayMillis();
		}

	}

	/**
	 * How one owner's hold ends.
	 *
	 * @param id the lock
	 * @param owner the owner token
	 * @param mode how
	 * @param keepMillis with {@link Mode#KEEP}: how long the keys stay taken from now
	 */
	record Release(LockId id, String owner, Mode mode, long keepMillis) {

		/** Deletes the keys and wakes their waiters (or hands a key to its first). */
		public static Release of(LockId id, String owner) {
			return new Release(id, owner, Mode.RELEASE, 0);
		}

		/** Leaves the keys to expire {@code keepMillis} from now. */
		public static Release keep(LockId id, String owner, long keepMillis) {
			return new Release(id, owner, Mode.KEEP, keepMillis);
		}

		/** A queued waiter gives up. */
		public static Release leave(LockId id, String owner) {
			return new Release(id, owner, Mode.LEAVE, 0);
		}

		/** Undoes an attempt that may have acquired. */
		public static Release undo(LockId id, String owner) {
			return new Release(id, owner, Mode.UNDO, 0);
		}

		/** Whether the store waits for the reply. */
		public boolean waits() {
			return this.mode == Mode.RELEASE || this.mode == Mode.KEEP;
		}

		/** The ways a hold ends. */
		public enum Mode {

			/**
			 * Deletes the keys that still hold the owner's token and notifies their
			 * waiters; waits for the reply.
			 */
			RELEASE,

			/**
			 * Leaves the keys that still hold the owner's token to expire
			 * {@code keepMillis} from now (never past their max-hold cap) instead of
			 * deleting them, and lowers their cap to that moment, so that no renewal sent
			 * earlier extends them. Waiters are not told: the keys are still taken. Waits
			 * for the reply.
			 */
			KEEP,

			/**
			 * A queued waiter gives up: it leaves the lock's queue and releases the lock
			 * if it was handed to it meanwhile; sends without waiting.
			 */
			LEAVE,

			/**
			 * Like {@link #RELEASE}, without waiting for the reply: undoes an attempt
			 * whose outcome the caller does not know or no longer wants.
			 */
			UNDO

		}

	}

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
