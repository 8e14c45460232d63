package io.lockstep.internal.transaction;

import java.util.function.Consumer;

import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.CallContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.transaction.support.TransactionSynchronization;

/**
 * Binds a lock taken inside an active transaction to it: confirms the lock in Redis
 * before the commit (a lost lease throws {@link io.lockstep.LockLostException}, a check
 * Redis did not answer a {@link LockException} saying it could not confirm the lock
 * before commit, counted as {@code lockstep.precommit.failed}: either way the transaction
 * rolls back) and releases it only after the transaction completed.
 */
public final class TransactionBoundRelease implements TransactionSynchronization {

	private static final Logger logger = LoggerFactory.getLogger(TransactionBoundRelease.class);

	private final LockHandle handle;

	/** Told once the transaction completed: the transaction's share of the release. */
	private final Consumer<Throwable> arrive;

	public TransactionBoundRelease(LockHandle handle, Consumer<Throwable> arrive) {
		this.handle = handle;
		this.arrive = arrive;
	}

	@Override
	public void beforeCommit(boolean readOnly) {
		if (this.handle instanceof CallContext.Entry entry) {
			entry.verifyBeforeCommit();
		}
		else {
			this.handle.verifyHeld();
		}
	}

	@Override
	public void afterCompletion(int status) {
		try {
			this.arrive.accept(null);
		}
		catch (LockException ex) {
			logger.warn("Releasing lock '{}' after its transaction completed failed", this.handle.key(), ex);
		}
	}

}
