package io.lockstep;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

/**
 * Runs work under distributed locks. Keys are plain strings; the Redis key is
 * {@code <key-prefix><name>:<key>} for a {@link #named(String) named} template, else
 * {@code <key-prefix><key>}.
 *
 * <p>
 * Without a fixed lease ({@link #withLeaseTime(Duration)}), a watchdog renews the lease
 * every third of it until the handle is closed (from any thread) or {@code max-hold-time}
 * is reached; a handle dropped without {@code close()} is logged as leaked and no longer
 * renewed. A call that holds a key and acquires it again re-enters without waiting and
 * without a Redis command; asking for more keys than it holds acquires only the missing
 * ones.
 *
 * <p>
 * Mutual exclusion holds on one Redis master while the lease holds. With asynchronous
 * replication, a failover can lose a lock; use fencing tokens where that matters.
 */
public interface LockTemplate {

	/**
	 * Runs the callback holding the lock, waiting up to the wait time while another owner
	 * holds it (Redis trouble is not waited for). The lock is released when the callback
	 * returns; inside an active Spring transaction, only when that transaction completes,
	 * and it is confirmed in Redis before the commit (a lost lease then rolls the
	 * transaction back with {@link LockLostException}).
	 * @throws LockAcquisitionException if the lock was not acquired within the wait time
	 * @throws LockLostException if the lease was lost while the callback ran (after it
	 * returned)
	 * @throws LockKeyException if the key is {@code null}, empty or too long
	 * @throws LockException if Redis cannot be reached, does not answer within the
	 * command timeout or refuses the command: at the first failed attempt, not after the
	 * wait time; the callback does not run
	 */
	<T extends @Nullable Object> T execute(String key, LockCallback<T> callback);

	/**
	 * Runs the callback holding every key, acquired all or nothing; see
	 * {@link #execute(String, LockCallback)}.
	 */
	<T extends @Nullable Object> T executeAll(Collection<String> keys, LockCallback<T> callback);

	/**
	 * Runs the callback if the lock is free now, without waiting.
	 * @return the callback's result, or empty when another owner holds the lock (also
	 * when the callback returned {@code null})
	 */
	<T> Optional<T> tryExecute(String key, LockCallback<@Nullable T> callback);

	/**
	 * Acquires the lock, waiting up to the wait time while another owner holds it; close
	 * the handle to release it.
	 * @throws LockAcquisitionException if the lock was not acquired within the wait time
	 * @throws LockException if Redis failed, at once (see
	 * {@link #execute(String, LockCallback)})
	 */
	LockHandle acquire(String key);

	/** Acquires every key, all or nothing, waiting up to the wait time. */
	LockHandle acquireAll(Collection<String> keys);

	/** Acquires the lock if it is free now, without waiting. */
	Optional<LockHandle> tryAcquire(String key);

	/**
	 * A {@link Lock} view of the key, for code written against {@code Lock}: owned by the
	 * thread that locks it and reentrant for that thread. {@code lock()} waits until it
	 * gets the lock (this template's wait time does not apply),
	 * {@code lockInterruptibly()} ends on interrupt with nothing held, {@code tryLock()}
	 * does not wait and {@code tryLock(time, unit)} waits up to {@code time};
	 * {@code unlock()} by a thread that does not hold it throws
	 * {@link IllegalMonitorStateException}, and {@code newCondition()} throws
	 * {@link UnsupportedOperationException}. The lease is this template's (a watchdog
	 * lease, renewed until {@code unlock()}, unless {@link #withLeaseTime(Duration)}
	 * fixed it). Redis trouble fails every method at once with a {@link LockException},
	 * as the template's own methods do. When the lease is lost while held, a re-entry by
	 * the holder throws {@link LockLostException}, and so does the {@code unlock()} that
	 * ends that hold.
	 * @throws LockKeyException if the key is {@code null}, empty or too long
	 */
	Lock asLock(String key);

	/** Whether any owner (in any process) holds the key now. */
	boolean isLocked(String key);

	/** A copy that waits up to {@code waitTime} ({@link Duration#ZERO}: never waits). */
	LockTemplate withWaitTime(Duration waitTime);

	/** A copy whose leases are fixed to {@code leaseTime} and never renewed. */
	LockTemplate withLeaseTime(Duration leaseTime);

	/**
	 * A copy whose locks, when released earlier than {@code minHoldTime} after they were
	 * acquired, are not deleted but left to expire at that moment, so that other
	 * instances (and this one) find them taken until then; locks held longer are released
	 * as usual. Meant for scheduled jobs: with {@code tryExecute} (or
	 * {@code @DistributedLock(onLocked = SKIP, minHoldTime = ...)}) a job that finishes
	 * quickly then runs once per {@code minHoldTime} across all instances, instead of
	 * once on each instance in turn.
	 * <p>
	 * At release, the key's lease (and its max-hold cap) is set to what remains of the
	 * minimum hold, only if the key still holds this owner's token; no waiter is woken,
	 * as the key is still taken, and the handle reports {@code isHeld()} false. A renewal
	 * still on its way cannot extend the key past that moment. If Redis does not answer,
	 * the key expires on its own with its lease, as for any failed release. A reentrant
	 * acquisition follows its outermost one: the minimum hold applies to the keys an
	 * acquisition actually took. {@link Duration#ZERO} turns it off.
	 * @throws IllegalArgumentException if it is negative, longer than this copy's fixed
	 * lease ({@link #withLeaseTime(Duration)}) or than the max-hold cap
	 */
	LockTemplate withMinHoldTime(Duration minHoldTime);

	/**
	 * A copy whose keys are {@code <name>:<key>}, whose metrics and endpoint name is
	 * {@code name}, and which uses the settings configured for that name, if any.
	 */
	LockTemplate named(String name);

	/**
	 * A copy whose locks are reported (metrics, events, endpoint) under {@code lockName},
	 * with keys unchanged; {@link #named(String)} sets both.
	 */
	LockTemplate withLockName(String lockName);

	/**
	 * A copy whose locks are read locks: shared with the other readers of the key,
	 * excluding writers (a plain lock is the key's write lock). A waiting writer is not
	 * starved: readers that come after it wait behind it. A call that holds a key's read
	 * lock and asks for its write lock gets a {@link LockException} at once (an upgrade
	 * would deadlock). Read locks take one key: {@code acquireAll} and {@code executeAll}
	 * refuse them.
	 * @throws IllegalArgumentException on a copy with {@link #withPermits(int)} above 1
	 * @throws UnsupportedOperationException on Redlock, which does not support them
	 */
	LockTemplate read();

	/**
	 * A copy whose locks are write locks: exclusive, excluding readers and writers, like
	 * the plain lock (the default); asking for the read lock while holding the write lock
	 * re-enters.
	 */
	LockTemplate write();

	/**
	 * A copy whose locks are semaphores: up to {@code permits} holders of the key at
	 * once, each with its own lease, fencing token and loss detection. Every holder of
	 * the key must ask with the same number: another number is a {@link LockException}
	 * naming both, and nothing is acquired. {@code 1} is the plain lock. Semaphores take
	 * one key.
	 * @throws IllegalArgumentException if {@code permits < 1}, or above 1 on a
	 * {@link #read()} copy
	 * @throws UnsupportedOperationException above 1 on Redlock, which does not support
	 * semaphores
	 */
	LockTemplate withPermits(int permits);

}
