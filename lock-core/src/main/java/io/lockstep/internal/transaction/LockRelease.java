package io.lockstep.internal.transaction;

import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.CallContext;

import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Releases a lock once every party that must outlast it has arrived: the call (its
 * return, or the completion of its future) and, when the lock was taken inside an active
 * transaction, that transaction's completion.
 */
public final class LockRelease {

	private final LockHandle handle;

	private final AtomicInteger parties;

	public LockRelease(LockHandle handle, int parties) {
		this.handle = handle;
		this.parties = new AtomicInteger(parties);
	}

	/**
	 * A release for a lock just acquired: after the call alone, or, when a Spring
	 * transaction is active on this thread, after both the call and that transaction
	 * (which also confirms the lock before it commits).
	 */
	public static LockRelease bind(LockHandle handle) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			return new LockRelease(handle, 1);
		}
		LockRelease release = new LockRelease(handle, 2);
		TransactionSynchronizationManager.registerSynchronization(new TransactionBoundRelease(handle, release::arrive));
		return release;
	}

	public LockHandle handle() {
		return this.handle;
	}

	/**
	 * One party is done; the last one releases the lock. A failure of the release is
	 * added to {@code failure} when there is one, else thrown; but when the lost lease
	 * interrupted the call, the {@link LockLostException} is thrown and {@code failure}
	 * (most likely caused by that interrupt) is added to it.
	 */
	public void arrive(Throwable failure) {
		if (this.parties.decrementAndGet() != 0) {
			return;
		}
		boolean interrupted = (this.handle instanceof CallContext.Entry entry) && entry.interruptedByLoss();
		try {
			this.handle.close();
		}
		catch (RuntimeException ex) {
			if (failure == null) {
				throw ex;
			}
			if (failure == ex) {
				return;
			}
			if (interrupted && ex instanceof LockLostException) {
				ex.addSuppressed(failure);
				throw ex;
			}
			failure.addSuppressed(ex);
		}
	}

}
