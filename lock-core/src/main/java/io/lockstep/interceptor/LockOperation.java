package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockKeyException;
import io.lockstep.OnLocked;
import io.lockstep.internal.engine.Sharing;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.ObjectUtils;

/**
 * One parsed and checked {@link io.lockstep.DistributedLock} of one method: its key
 * expression, name, durations and what to do when the lock is not acquired.
 */
final class LockOperation {

	private final String description;

	private final Method method;

	private final String keyText;

	private final Expression key;

	private final LockKeyExpressions expressions;

	private final @Nullable String name;

	private final Timing timing;

	private final Sharing sharing;

	private final ReturnKind returnKind;

	private final OnLocked onLocked;

	private final @Nullable Supplier<@Nullable Object> skipResult;

	private final @Nullable FallbackMethod fallback;

	LockOperation(String description, Method method, String keyText, Expression key, LockKeyExpressions expressions,
			@Nullable String name, Timing timing, Sharing sharing, ReturnKind returnKind, OnLocked onLocked,
			@Nullable Supplier<@Nullable Object> skipResult, @Nullable FallbackMethod fallback) {
		this.description = description;
		this.method = method;
		this.keyText = keyText;
		this.key = key;
		this.expressions = expressions;
		this.name = name;
		this.timing = timing;
		this.sharing = sharing;
		this.returnKind = returnKind;
		this.onLocked = onLocked;
		this.skipResult = skipResult;
		this.fallback = fallback;
	}

	/** E.g. {@code @DistributedLock on com.example.Orders.place(String, int)}. */
	String description() {
		return this.description;
	}

	/** The lock name, or {@code null}. */
	@Nullable String name() {
		return this.name;
	}

	/**
	 * The name locks of this method are reported under (metrics, events, endpoint): the
	 * annotation's name, else {@code SimpleClassName.method}.
	 */
	String lockName() {
		return (this.name != null) ? this.name
				: this.method.getDeclaringClass().getSimpleName() + "." + this.method.getName();
	}

	/** The wait time set on the annotation, or {@code null}. */
	@Nullable Duration waitTime() {
		return this.timing.waitTime();
	}

	/** The fixed lease set on the annotation, or {@code null} for the watchdog. */
	@Nullable Duration leaseTime() {
		return this.timing.leaseTime();
	}

	/** The minimum hold set on the annotation, or {@code null}. */
	@Nullable Duration minHoldTime() {
		return this.timing.minHoldTime();
	}

	/**
	 * How the lock shares its key: the plain lock, a read lock, or a semaphore's permit
	 * ({@code mode} and {@code permits} on the annotation).
	 */
	Sharing sharing() {
		return this.sharing;
	}

	/** Whether a lock not acquired skips the method (no fallback, no exception). */
	boolean skips() {
		return this.fallback == null && this.onLocked == OnLocked.SKIP;
	}

	/** Whether the method returns a future that the lock must outlive. */
	boolean async() {
		return this.returnKind == ReturnKind.FUTURE;
	}

	/** What the method returns, as far as the lock is concerned. */
	ReturnKind returnKind() {
		return this.returnKind;
	}

	/**
	 * Evaluates the key for one call: one key, or several for a collection or array.
	 * @throws LockKeyException if it evaluates to {@code null}, an empty string or an
	 * empty collection, or fails, or to a collection or array for a read lock or a
	 * semaphore (which take one key)
	 */
	List<String> keys(@Nullable Object[] args, @Nullable Object target, @Nullable Class<?> targetClass) {
		Object value;
		try {
			value = this.expressions.evaluate(this.key, this.method, args, target, targetClass);
		}
		catch (EvaluationException ex) {
			throw new LockKeyException(this.description + ": key '" + this.keyText + "' failed: " + ex.getMessage(),
					ex);
		}
		if (value instanceof Collection<?> || (value != null && value.getClass().isArray())) {
			Collection<?> elements = (value instanceof Collection<?> collection) ? collection
					: List.of(ObjectUtils.toObjectArray(value));
			if (!this.sharing.exclusive()) {
				throw new LockKeyException(this.description + ": key '" + this.keyText + "' evaluated to "
						+ ((value instanceof Collection<?>) ? "a collection" : "an array") + " of " + elements.size()
						+ ", but " + this.sharing.describe() + " (" + attributes() + ") takes one key; lock one key, "
						+ "or use the write lock (mode = WRITE, permits = 1) to lock several");
			}
			if (elements.isEmpty()) {
				throw invalidKey("an empty " + ((value instanceof Collection<?>) ? "collection" : "array"));
			}
			List<String> keys = new ArrayList<>(elements.size());
			for (Object element : elements) {
				keys.add(single(element, "an element that is "));
			}
			return keys;
		}
		return List.of(single(value, ""));
	}

	/**
	 * Runs the fallback, skips, or throws, for a lock not acquired.
	 * @param ex why, or {@code null} for a caller that skips (then there is nothing to
	 * throw)
	 */
	@Nullable Object notAcquired(@Nullable Object target, @Nullable Object[] args, @Nullable LockAcquisitionException ex)
			throws Throwable {
		if (this.fallback != null) {
			return this.fallback.invoke(target, args, ex);
		}
		// set for SKIP unless the method is reactive (whose skip is an empty stream)
		if (this.onLocked == OnLocked.SKIP && this.skipResult != null) {
			return this.skipResult.get();
		}
		if (ex == null) {
			throw new IllegalStateException("Nothing to skip with for " + this);
		}
		throw ex;
	}

	/** The annotation's sharing attributes, as written: "mode = READ", "permits = 3". */
	private String attributes() {
		return this.sharing.read() ? "mode = READ" : "permits = " + this.sharing.permits();
	}

	private String single(@Nullable Object value, String what) {
		if (value == null) {
			throw invalidKey(what + "null");
		}
		String key = value.toString();
		if (key == null || key.isBlank()) {
			throw invalidKey(what + "empty ('" + key + "')");
		}
		return key;
	}

	private LockKeyException invalidKey(String what) {
		return new LockKeyException(this.description + ": key '" + this.keyText + "' evaluated to " + what);
	}

	@Override
	public String toString() {
		return this.description;
	}

	/**
	 * The durations set on the annotation; {@code null} for each one not set.
	 *
	 * @param waitTime the wait for the lock
	 * @param leaseTime the fixed lease
	 * @param minHoldTime the minimum hold
	 */
	record Timing(@Nullable Duration waitTime, @Nullable Duration leaseTime, @Nullable Duration minHoldTime) {
	}

	/**
	 * Names this operation's lock in an exception of its acquisition or release (not in
	 * one the method threw: that may be another lock's).
	 */
	<E extends io.lockstep.LockException> E named(E ex) {
		ex.initLockName(lockName());
		return ex;
	}

}
