package io.lockstep.autoconfigure;

import java.time.Duration;

import io.lockstep.LockException;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Connects the lock client while the application starts, once every singleton exists and
 * before the web server or the schedulers start: one cheap question
 * ({@link LockMonitor#ping()}, bounded by the command timeout). The lock client connects
 * on first use, and the bound on a command covers connecting; without this, the
 * application's first lock after start-up paid for the connection (and the client's first
 * use) within its command timeout, and on a loaded machine failed on a healthy Redis. A
 * Redis that does not answer delays start-up by at most the command timeout and is no
 * failure: the application starts, and locks once Redis answers.
 */
final class LockClientWarmUp implements SmartInitializingSingleton {

	private static final Logger logger = LoggerFactory.getLogger(LockClientWarmUp.class);

	private final ObjectProvider<LockTemplate> locks;

	LockClientWarmUp(ObjectProvider<LockTemplate> locks) {
		this.locks = locks;
	}

	@Override
	public void afterSingletonsInstantiated() {
		LockTemplate template = this.locks.getIfUnique();
		if (!(template instanceof LockMonitor monitor) || !monitor.isDistributed()) {
			return;
		}
		long start = System.nanoTime();
		try {
			Duration answered = monitor.ping();
			logger.debug("Lock client connected at start-up in {} ms (Redis answered in {} ms)",
					Duration.ofNanos(System.nanoTime() - start).toMillis(), answered.toMillis());
		}
		catch (LockException ex) {
			logger.info("Redis did not answer the lock client at start-up ({}): the application starts all the "
					+ "same, and locks once Redis answers", ex.getMessage());
		}
		catch (RuntimeException ex) {
			// connecting early is an optimisation: it never fails start-up
			logger.warn("Connecting the lock client at start-up failed; it connects on first use", ex);
		}
	}

}
