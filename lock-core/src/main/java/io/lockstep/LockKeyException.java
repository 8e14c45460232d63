package io.lockstep;

/**
 * A lock key is unusable: {@code null}, empty, an empty collection, or too long. The
 * message names the key, and for {@link DistributedLock} the method and the expression.
 */
public class LockKeyException extends LockException {

	private static final long serialVersionUID = 1L;

	public LockKeyException(String message) {
		super(message);
	}

	public LockKeyException(String message, Throwable cause) {
		super(message, cause);
	}

}
