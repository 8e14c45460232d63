package io.lockstep.interceptor;

import java.util.List;

import io.lockstep.internal.CallContext;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Guards transactions that begin while the current call holds distributed locks (the
 * normal case: {@code @DistributedLock} runs outside {@code @Transactional}, or a
 * transaction inside a {@code LockTemplate} callback): before such a transaction commits,
 * every one of those locks is confirmed in Redis, and a lost lease throws
 * {@link io.lockstep.LockLostException} so the transaction rolls back instead of
 * committing unprotected work. Redis unreachable at that moment also rolls back, with a
 * {@link io.lockstep.LockException} saying the lock could not be confirmed before commit,
 * counted as {@code lockstep.precommit.failed}.
 *
 * <p>
 * As a {@link BeanPostProcessor} it adds itself to every
 * {@link ConfigurableTransactionManager} bean (Spring's
 * {@code AbstractPlatformTransactionManager} family); other transaction managers are not
 * guarded.
 */
public final class HeldLocksTransactionListener implements TransactionExecutionListener, BeanPostProcessor {

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof ConfigurableTransactionManager manager
				&& !manager.getTransactionExecutionListeners().contains(this)) {
			manager.addListener(this);
		}
		return bean;
	}

	@Override
	public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
		if (beginFailure != null || !TransactionSynchronizationManager.isSynchronizationActive()) {
			return;
		}
		List<CallContext.Entry> held = CallContext.held();
		if (!held.isEmpty()) {
			TransactionSynchronizationManager.registerSynchronization(new VerifyBeforeCommit(held));
		}
	}

	/** Confirms the locks held when the transaction began. */
	private record VerifyBeforeCommit(List<CallContext.Entry> locks) implements TransactionSynchronization {

		@Override
		public void beforeCommit(boolean readOnly) {
			for (CallContext.Entry lock : this.locks) {
				lock.verifyBeforeCommit();
			}
		}

	}

}
