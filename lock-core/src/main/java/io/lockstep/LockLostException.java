package io.lockstep;

/**
 * The lease of a held lock was lost while the work ran: a renewal found the key gone or
 * held by another owner, or Redis stayed unreachable past the lease. Another owner may
 * have run the protected work at the same time; storage that checks fencing tokens can
 * reject the late writes. Thrown no later than the release of the lock.
 */
public class LockLostException extends LockException {

	private static final long serialVersionUID = 1L;

	private final String key;

	public LockLostException(String key, String reason) {
		super("Lock '" + key + "' was lost while held: " + reason);
		this.key = key;
	}

	/** The Redis key of the lock (with the key prefix). */
	public String getKey() {
		return this.key;
	}

}
