package io.lockstep;

import java.time.Duration;

import io.lockstep.internal.DurationFormat;

/**
 * The lock was not acquired within the wait time because another owner held it.
 */
public class LockAcquisitionException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final Duration waited;

	public LockAcquisitionException(String key, Duration waited) {
		super("Lock '" + key + "' not acquired within " + DurationFormat.format(waited) + ": held by another owner");
		this.key = key;
		this.waited = waited;
	}

	/** The Redis key of the lock (with the key prefix). */
	public String getKey() {
		return this.key;
	}

	/** How long the caller waited before giving up. */
	public Duration getWaited() {
		return this.waited;
	}

}
