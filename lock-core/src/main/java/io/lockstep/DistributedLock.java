package io.lockstep;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method holding a distributed lock. The lock's identity is its Redis key,
 * {@code <key-prefix>[<name>:]<value of key>}: two methods whose keys evaluate to the
 * same value exclude each other.
 *
 * <p>
 * The advice runs outside {@code @Transactional} on the same method (property
 * {@code lockstep.aspect-order}), so the lock is held until after the commit. A lock
 * taken inside an already active transaction is released only when that transaction
 * completes, and every lock held by the call is confirmed in Redis before a transaction
 * commits: a lost lease rolls it back with {@link LockLostException}. Locks are reentrant
 * per thread. Methods returning {@code CompletableFuture} or {@code CompletionStage} hold
 * the lock until the future completes. Like every Spring proxy-based annotation it does
 * not apply to calls from within the same object ({@code this.method()}).
 *
 * <p>
 * Every annotated method is checked when the application starts: an expression that does
 * not parse or names an unknown parameter, a bad duration, an unknown fallback, an
 * unsupported return type, {@code permits} below 1 or above 1 with a read lock, or a read
 * lock or semaphore on a lock store that does not keep them (Redlock) fails start-up with
 * a message naming the method.
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DistributedLock {

	/**
	 * SpEL expression for the lock key, over the method's parameters ({@code #name},
	 * {@code #p0}, {@code #a0}), beans ({@code @beanName}) and {@code #root.method},
	 * {@code #root.args}, {@code #root.target}. A {@code Collection} or array locks every
	 * element, all or nothing. {@code null}, an empty string or an empty collection is a
	 * {@link LockKeyException}. Type references ({@code T(...)}), constructors and
	 * assignments are rejected; argument values are never evaluated as expressions.
	 * Parsed once, at start-up; at most 1024 characters.
	 */
	String key();

	/**
	 * Optional namespace: the Redis key becomes {@code <key-prefix><name>:<key>}, and
	 * {@code lockstep.locks.<name>.wait-time} / {@code .lease-time} apply.
	 */
	String name() default "";

	/**
	 * How long to wait for the lock, e.g. {@code "2s"}, {@code "500ms"}, {@code "PT2S"},
	 * {@code "${orders.lock-wait:2s}"}; {@code "0"} does not wait; {@code ""} uses
	 * {@code lockstep.locks.<name>.wait-time} when set for the lock's name, else
	 * {@code lockstep.wait-time} — except with {@link OnLocked#SKIP}, which then does not
	 * wait: a skipped method is done elsewhere, and waiting to run it late would defeat
	 * the skip.
	 */
	String waitTime() default "";

	/**
	 * A fixed lease, never renewed: if the method runs longer, the lock expires under it
	 * and the call ends with {@link LockLostException}. {@code ""} (the default) uses the
	 * watchdog: a lease of {@code lockstep.lease-time}, renewed while the method runs.
	 */
	String leaseTime() default "";

	/**
	 * What to do when the lock was not acquired within the wait time; ignored when a
	 * {@link #fallback()} is set. {@link OnLocked#SKIP} does not wait unless a
	 * {@link #waitTime()} (or the name's {@code wait-time}) is set.
	 */
	OnLocked onLocked() default OnLocked.THROW;

	/**
	 * Name of a method of the same bean with the same parameters, optionally followed by
	 * a {@link LockAcquisitionException} parameter, called (on the target object, not
	 * through the proxy) instead when the lock was not acquired. Its return type must be
	 * assignable to this method's. Not allowed together with {@link OnLocked#SKIP}.
	 */
	String fallback() default "";

	/**
	 * For scheduled jobs: when the method returns earlier than this after the lock was
	 * acquired, the lock is not released but left to expire at that moment, so that the
	 * other instances (and this one) skip that period; a longer run releases as usual.
	 * Same syntax as {@link #waitTime()}; {@code ""} uses
	 * {@code lockstep.locks.<name>.min-hold-time} when set for the lock's name, else
	 * none. With {@code @Scheduled(fixedRate = ...)} and {@link OnLocked#SKIP}, set it a
	 * little shorter than the period: the job then runs once per period across all
	 * instances. The release sets the Redis key's lease to what remains (only while the
	 * key holds this owner's token); the method's handle no longer reports the lock held.
	 * Start-up fails when it is longer than a fixed {@link #leaseTime()} or than
	 * {@code lockstep.max-hold-time}. See {@code LockTemplate.withMinHoldTime}.
	 */
	String minHoldTime() default "";

	/**
	 * {@link LockMode#READ}: shared with the other readers of the key;
	 * {@link LockMode#WRITE} (default): exclusive, like a plain lock. Holding the read
	 * lock and asking for the write lock of the same key fails at once (an upgrade would
	 * deadlock); asking for the read lock while holding the write lock re-enters. One key
	 * only: a key expression that evaluates to a collection or array fails the call with
	 * a {@link LockKeyException} naming the method, before anything is acquired. Methods
	 * returning {@code CompletableFuture}, {@code Mono}, {@code Flux}, and Kotlin
	 * {@code suspend} functions and {@code Flow}s take it too. Redlock keeps exclusive
	 * locks only: there, a method with {@code READ} fails start-up naming the method.
	 */
	LockMode mode() default LockMode.WRITE;

	/**
	 * A semaphore: up to this many holders of the key at once, each with its own lease
	 * and fencing token (with {@code mode} WRITE only). Every holder of the key must ask
	 * with the same number: another number fails the call with a {@link LockException}
	 * naming both, and nothing is acquired. Default 1: the plain lock. One key only, as
	 * for {@link #mode()} {@code READ}. Start-up fails, naming the method, for a number
	 * below 1, for a number above 1 with {@code mode = READ}, and on Redlock (which keeps
	 * exclusive locks only) for a number above 1.
	 */
	int permits() default 1;

}
