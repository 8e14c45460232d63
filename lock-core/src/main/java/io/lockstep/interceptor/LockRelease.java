package io.lockstep.interceptor;

import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockHandle;

/**
 * Releases a lock once every party that must outlast it has arrived: the call (its
 * return, or the completion of its future) and, when the lock was taken inside an active
 * transaction, that transaction's completion.
 */
final class LockRelease {

	private final LockHandle handle;

	private final AtomicInteger parties;

	LockRelease(LockHandle handle, int parties) {
		this.handle = handle;
		this.parties = new AtomicInteger(parties);
	}

	LockHandle handle() {
		return this.handle;
	}

	/**
	 * One party is done; the last one releases the lock. A failure of the release is
	 * added to {@code failure} when there is one, else thrown.
	 */
	void arrive(Throwable failure) {
		if (this.parties.decrementAndGet() != 0) {
			return;
		}
		try {
			this.handle.close();
		}
		catch (RuntimeException ex) {
			if (failure == null) {
				throw ex;
			}
			if (failure != ex) {
				failure.addSuppressed(ex);
			}
		}
	}

}
