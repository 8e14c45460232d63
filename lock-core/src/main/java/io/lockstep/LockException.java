package io.lockstep;

/**
 * Base class of every exception Lockstep throws; unchecked. Thrown as is when Redis
 * cannot be reached or answers with an error, with the cause attached; the protected work
 * does not run.
 */
public class LockException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public LockException(String message) {
		super(message);
	}

	public LockException(String message, Throwable cause) {
		super(message, cause);
	}

}
