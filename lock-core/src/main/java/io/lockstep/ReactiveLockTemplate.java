package io.lockstep;

import java.time.Duration;
import java.util.Collection;
import java.util.function.Function;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs reactive work under distributed locks, held for the subscription: the lock is
 * acquired when the returned {@code Mono}/{@code Flux} is subscribed to, without blocking
 * any thread (the Redis client's asynchronous API; waiting is a release-notification
 * subscription and a timer, not a parked thread), renewed while the subscription lasts,
 * and released when the work completes, fails or is cancelled. Nothing happens before
 * subscription; each subscription acquires on its own. Keys, names and settings are those
 * of {@link LockTemplate} (with the starter, {@code lockstep.*} and
 * {@code lockstep.locks.<name>.*}).
 *
 * <p>
 * Threads: the work is subscribed to, and signals after an acquisition arrive, on one of
 * Lockstep's threads ({@code lockstep-async-N}), never on the Redis client's I/O threads;
 * use {@code publishOn} to move elsewhere. Releases run on those threads too (one round
 * trip, bounded by the command timeout), so a cancelling or completing thread never
 * blocks.
 *
 * <p>
 * A lease lost while the work runs (a renewal found the key gone, or Redis was
 * unreachable past the lease) cancels the work and ends the stream with
 * {@link LockLostException}, as soon as the watchdog finds it; a loss found at release
 * ends it with that error instead of completion. The fencing token is
 * {@link LockHandle#fencingToken()} of the handle given to the work, and
 * {@link #currentFencingToken()} inside it (the thread-bound
 * {@link DistributedLocks#currentFencingToken()} cannot see reactive locks).
 *
 * <p>
 * Reentrancy: work that locks keys its subscription already holds (all of them) through
 * the same lock client re-uses the outer lock; any other nesting acquires, and so waits
 * for a key its own subscription holds until its wait time ends.
 */
public interface ReactiveLockTemplate {

	/**
	 * Runs the work holding the lock, waiting up to the wait time for it.
	 * @return the work's result; an error {@link LockAcquisitionException} if not
	 * acquired within the wait time, {@link LockLostException} if the lease was lost
	 * while held, {@link LockKeyException} for a bad key, {@link LockException} if Redis
	 * cannot be reached (the work is not subscribed to)
	 */
	<T> Mono<T> execute(String key, Function<? super LockHandle, ? extends Mono<T>> work);

	/**
	 * Runs the work holding every key, acquired all or nothing; see
	 * {@link #execute(String, Function)}.
	 */
	<T> Mono<T> executeAll(Collection<String> keys, Function<? super LockHandle, ? extends Mono<T>> work);

	/**
	 * Streams the work's elements holding the lock until the work completes, fails, or
	 * the subscriber cancels; see {@link #execute(String, Function)}.
	 */
	<T> Flux<T> executeMany(String key, Function<? super LockHandle, ? extends Publisher<T>> work);

	/**
	 * Runs the work if the lock is free now, without waiting.
	 * @return the work's result, or empty when another owner holds the lock
	 */
	<T> Mono<T> tryExecute(String key, Function<? super LockHandle, ? extends Mono<T>> work);

	/**
	 * Streams the work's elements if the lock is free now, without waiting; empty when
	 * another owner holds it.
	 */
	<T> Flux<T> tryExecuteMany(String key, Function<? super LockHandle, ? extends Publisher<T>> work);

	/** A copy that waits up to {@code waitTime} ({@link Duration#ZERO}: never waits). */
	ReactiveLockTemplate withWaitTime(Duration waitTime);

	/** A copy whose leases are fixed to {@code leaseTime} and never renewed. */
	ReactiveLockTemplate withLeaseTime(Duration leaseTime);

	/** See {@link LockTemplate#withMinHoldTime(Duration)}. */
	ReactiveLockTemplate withMinHoldTime(Duration minHoldTime);

	/**
	 * A copy whose keys are {@code <name>:<key>}, whose metrics and endpoint name is
	 * {@code name}, and which uses the settings configured for that name, if any.
	 */
	ReactiveLockTemplate named(String name);

	/** A copy whose locks are reported under {@code lockName}, with keys unchanged. */
	ReactiveLockTemplate withLockName(String lockName);

	/** See {@link LockTemplate#read()}. */
	ReactiveLockTemplate read();

	/** See {@link LockTemplate#write()}. */
	ReactiveLockTemplate write();

	/** See {@link LockTemplate#withPermits(int)}. */
	ReactiveLockTemplate withPermits(int permits);

	/**
	 * The fencing token of the innermost lock held by the subscription, read from the
	 * Reactor {@code Context} (under the key {@code LockHandle.class}); empty outside
	 * locked work.
	 */
	static Mono<Long> currentFencingToken() {
		return Mono.deferContextual((context) -> Mono.justOrEmpty(context.getOrEmpty(LockHandle.class))
			.map((handle) -> ((LockHandle) handle).fencingToken()));
	}

}
