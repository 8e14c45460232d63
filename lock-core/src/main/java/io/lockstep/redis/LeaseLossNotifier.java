package io.lockstep.redis;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.LockLostEvent;
import io.lockstep.LockLostListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a lost lease visible, once per lease: marks it lost, counts it, observes it, logs
 * a WARN, tells the {@link LockLostListener}s and, when configured, interrupts the
 * holder.
 */
final class LeaseLossNotifier {

	private static final Logger logger = LoggerFactory.getLogger(LeaseLossNotifier.class);

	private final List<LockLostListener> listeners;

	private final boolean interruptHolder;

	private final LockObservations observations;

	private final AtomicLong lost = new AtomicLong();

	LeaseLossNotifier(List<LockLostListener> listeners, boolean interruptHolder, LockObservations observations) {
		this.listeners = List.copyOf(listeners);
		this.interruptHolder = interruptHolder;
		this.observations = observations;
	}

	void lost(Lease lease, String reason) {
		if (!lease.markLost(reason)) {
			return;
		}
		this.lost.incrementAndGet();
		this.observations.leaseLost(lease.observation(), reason);
		logger.warn("Lock '{}' (fencing token {}) held by thread '{}' was lost: {}", lease.key(), lease.fencingToken(),
				lease.holder().getName(), reason);
		LockLostEvent event = new LockLostEvent(lease, lease.key(), lease.lockName(), lease.fencingToken(), reason,
				lease.holder().getName());
		for (LockLostListener listener : this.listeners) {
			try {
				listener.onLockLost(event);
			}
			catch (RuntimeException ex) {
				logger.error("LockLostListener {} failed", listener, ex);
			}
		}
		if (this.interruptHolder && !lease.detached() && lease.holder().isAlive()) {
			lease.holder().interrupt();
		}
	}

	/** Leases lost since start. */
	long count() {
		return this.lost.get();
	}

}
