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
 * not parse or names an unknown parameter, a bad duration, an unknown fallback or an
 * unsupported return type fails start-up with a message naming the method.
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
	 * {@code lockstep.wait-time} (or the lock name's override).
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
	 * {@link #fallback()} is set.
	 */
	OnLocked onLocked() default OnLocked.THROW;

	/**
	 * Name of a method of the same bean with the same parameters, optionally followed by
	 * a {@link LockAcquisitionException} parameter, called (on the target object, not
	 * through the proxy) instead when the lock was not acquired. Its return type must be
	 * assignable to this method's. Not allowed together with {@link OnLocked#SKIP}.
	 */
	String fallback() default "";

}
