package io.lockstep.internal;

/**
 * A Lockstep setting that cannot work, found when the application starts: an attribute of
 * a {@code @DistributedLock} or a {@code lockstep.*} property. The message names the
 * method or the property and what is wrong with it; {@link #action()} says what to do.
 * Spring Boot's failure analysis shows both instead of a stack trace.
 */
public class LockConfigurationException extends IllegalStateException {

	private final String action;

	public LockConfigurationException(String message, String action) {
		this(message, action, null);
	}

	public LockConfigurationException(String message, String action, Throwable cause) {
		super(message, cause);
		this.action = action;
	}

	/** What to change, in a sentence or two. */
	public String action() {
		return this.action;
	}

}
