package io.lockstep;

import org.jspecify.annotations.Nullable;

/**
 * Base class of every exception Lockstep throws; unchecked. Thrown as is when Redis
 * cannot be reached or answers with an error, with the cause attached; the protected work
 * does not run.
 */
public class LockException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private @Nullable String lockName;

	public LockException(String message) {
		super(message);
	}

	public LockException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * The name of the lock this exception is about, as metrics tag it: the
	 * {@link DistributedLock#name() name} of a {@code @DistributedLock} method, else
	 * {@code SimpleClassName.method}. Never a key's value, so it may be shown to clients
	 * (the {@code lock} property of the web answers). {@code null} when the exception did
	 * not pass through a {@code @DistributedLock} method's advice (a {@link LockTemplate}
	 * call).
	 */
	public @Nullable String getLockName() {
		return this.lockName;
	}

	/**
	 * Records the name of the lock this exception is about, once: like
	 * {@link Throwable#initCause}, a later call leaves the first name (the innermost
	 * lock's). Lockstep's advice calls it for the lock of a {@code @DistributedLock}
	 * method.
	 * @param lockName the lock's name, never a key's value
	 * @return this exception
	 */
	public LockException initLockName(String lockName) {
		if (this.lockName == null) {
			this.lockName = lockName;
		}
		return this;
	}

}
