package io.lockstep;

import java.time.Instant;

import org.springframework.context.ApplicationEvent;

/**
 * Published when the lease of a held lock was lost: a renewal found the key gone or owned
 * by another owner, Redis stayed unreachable past the lease, or {@code max-hold-time} ran
 * out. The holder may still be running; another owner may hold the lock now.
 */
public class LockLostEvent extends ApplicationEvent {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final String lockName;

	private final long fencingToken;

	private final String reason;

	private final String holderThread;

	public LockLostEvent(Object source, String key, String lockName, long fencingToken, String reason,
			String holderThread) {
		super(source);
		this.key = key;
		this.lockName = lockName;
		this.fencingToken = fencingToken;
		this.reason = reason;
		this.holderThread = holderThread;
	}

	/** The Redis key of the lost lock. */
	public String getKey() {
		return this.key;
	}

	/**
	 * The lock name used for metrics ({@code named(...)}, the annotation's name, or the
	 * method).
	 */
	public String getLockName() {
		return this.lockName;
	}

	/** The fencing token the holder had; storage should reject it from now on. */
	public long getFencingToken() {
		return this.fencingToken;
	}

	/** Why the lease is considered lost. */
	public String getReason() {
		return this.reason;
	}

	/** The name of the thread that held the lock. */
	public String getHolderThread() {
		return this.holderThread;
	}

	/** When the loss was detected. */
	public Instant getDetectedAt() {
		return Instant.ofEpochMilli(getTimestamp());
	}

}
