package io.lockstep.internal.engine;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.LockLostEvent;
import io.lockstep.LockLostListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes lost leases and failed releases visible: counts, observes and logs them, and
 * tells the {@link LockLostListener}s, in order, on a thread of its own
 * ({@code lockstep-events}; a virtual thread where the application asked for them), never
 * on a storage client's I/O thread or the watchdog, so a listener may call the lock API
 * and a failing listener (even with an {@code Error}) harms nothing else. When
 * configured, a lost lease also interrupts the calls still guarded by it.
 */
final class LeaseEvents implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LeaseEvents.class);

	private final List<LockLostListener> listeners;

	private final boolean interruptHolder;

	private final LockObservations observations;

	private final ExecutorService executor;

	private final AtomicLong lost = new AtomicLong();

	private final AtomicLong releasesFailed = new AtomicLong();

	/**
	 * @param virtual whether listeners run on a virtual thread (JDK 21+)
	 */
	LeaseEvents(List<LockLostListener> listeners, boolean interruptHolder, LockObservations observations,
			boolean virtual) {
		this.listeners = List.copyOf(listeners);
		this.interruptHolder = interruptHolder;
		this.observations = observations;
		ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				virtual ? LockThreads.virtual("lockstep-events-") : LockThreads.platform("lockstep-events"));
		executor.allowCoreThreadTimeOut(true);
		this.executor = executor;
	}

	/** A lease was lost while held (called once per lease, by its transition). */
	void lost(Lease lease, String reason) {
		this.lost.incrementAndGet();
		this.observations.leaseLost(lease.observation());
		logger.warn("Lock '{}' (fencing token {}) acquired by thread '{}' was lost: {}", lease.id().display(),
				lease.fencingToken(lease.id().first()), lease.holderThread(), reason);
		if (this.interruptHolder) {
			lease.calls().forEach(CallFrame::interrupt);
		}
		if (this.listeners.isEmpty()) {
			return;
		}
		LockLostEvent event = new LockLostEvent(lease.id().display(), lease.id().display(), lease.lockName(),
				lease.fencingToken(lease.id().first()), reason, lease.holderThread());
		try {
			this.executor.execute(() -> tell(event));
		}
		catch (RejectedExecutionException ex) {
			logger.debug("Lock-lost listeners not told (shutting down): {}", event.getKey());
		}
	}

	/** Releasing failed after the work completed; the lease is left to expire. */
	void releaseFailed(Lease lease, Throwable cause) {
		this.releasesFailed.incrementAndGet();
		this.observations.releaseFailed(lease.observation());
		logger.warn("Could not release lock '{}' after its work completed; trying again in the background until "
				+ "its lease ends: {}", lease.id().display(), cause.getMessage());
	}

	private void tell(LockLostEvent event) {
		for (LockLostListener listener : this.listeners) {
			try {
				listener.onLockLost(event);
			}
			catch (Throwable ex) {
				logger.error("LockLostListener {} failed", listener, ex);
			}
		}
	}

	/** Leases lost since start. */
	long lostCount() {
		return this.lost.get();
	}

	/** Releases that failed after the work completed, since start. */
	long releaseFailures() {
		return this.releasesFailed.get();
	}

	@Override
	public void close() {
		this.executor.shutdown();
	}

}
