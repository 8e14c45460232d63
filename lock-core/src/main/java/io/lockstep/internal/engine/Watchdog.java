package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.lockstep.internal.DurationFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches every held lease on one thread of its own ({@code lockstep-watchdog}). A pass
 * declares lost the leases whose local deadline passed, and renews, in batches of up to
 * {@value #BATCH} leases per call, the watchdog leases a third of whose lease has passed
 * since the last renewal was sent (at once after a failed renewal). Renewal replies are
 * applied on this thread too, so a lease's renewal state has one writer. It never renews
 * a lease that is not {@code HELD} (released, releasing, lost or leaked) or past the
 * max-hold cap. Passes run when the next lease falls due, at most
 * {@value #MAX_DELAY_MILLIS} ms apart while leases are held; a failing pass is logged and
 * the next one runs.
 */
final class Watchdog implements AutoCloseable {

	static final int BATCH = 250;

	private static final long MAX_DELAY_MILLIS = 50;

	private static final long MAX_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(MAX_DELAY_MILLIS);

	private static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final Logger logger = LoggerFactory.getLogger(Watchdog.class);

	private final LockStore store;

	private final Collection<Lease> leases;

	private final ScheduledThreadPoolExecutor scheduler;

	/**
	 * The scheduled pass, or {@code null} while a pass runs; written under the monitor.
	 */
	private volatile ScheduledFuture<?> next;

	private volatile long nextAt;

	private volatile String lastFailure;

	private volatile int mostCallsInAPass;

	Watchdog(LockStore store, Collection<Lease> leases) {
		this.store = store;
		this.leases = leases;
		// a platform thread even where the application runs on virtual threads: its tasks
		// never block, and renewals must run on time even while the application's virtual
		// threads keep every carrier thread busy (a late renewal is a lost lease)
		this.scheduler = new ScheduledThreadPoolExecutor(1, LockThreads.platform("lockstep-watchdog"));
		this.scheduler.setRemoveOnCancelPolicy(true);
	}

	ScheduledExecutorService executor() {
		return this.scheduler;
	}

	/** A lease was added: make sure a pass runs by its first renewal or deadline. */
	void wake(Lease lease) {
		long at = Math.min(lease.deadlineNanos(), nextRenewal(lease));
		// a pass scheduled by then has not started (it clears next first), so it sees the
		// lease, which is in the set already: no need to take the monitor
		if (this.next != null && this.nextAt - at <= 0) {
			return;
		}
		schedule(at);
	}

	/**
	 * Whether a lease held now has a renewal that failed to reach the storage and none
	 * confirmed since: the present, not the history. A failed renewal is due again at
	 * once, so this turns false about one round trip after the storage answers again, and
	 * at once when such leases end (released, lost); leases too short to have renewed
	 * never make it true.
	 */
	boolean renewalsFailing() {
		for (Lease lease : this.leases) {
			if (lease.state() == Lease.State.HELD && lease.renewed() && lease.renewal().error() != null) {
				return true;
			}
		}
		return false;
	}

	String lastFailure() {
		return this.lastFailure;
	}

	/** The most renewal calls any one pass has sent. */
	int mostCallsInAPass() {
		return this.mostCallsInAPass;
	}

	private void pass() {
		synchronized (this) {
			this.next = null;
		}
		try {
			long now = System.nanoTime();
			long earliest = Long.MAX_VALUE;
			List<Lease> due = new ArrayList<>();
			for (Lease lease : this.leases) {
				if (lease.state() != Lease.State.HELD) {
					continue;
				}
				if (now - lease.deadlineNanos() >= 0) {
					lease.lose(expiryReason(lease, now));
					continue;
				}
				earliest = Math.min(earliest, lease.deadlineNanos());
				if (lease.renewed() && !lease.renewal().renewing()) {
					// renewing a little early lets leases that fall due together share a
					// call
					long early = Math.min(MAX_DELAY_NANOS, lease.leaseNanos() / 6);
					if (now - (nextRenewal(lease) - early) >= 0 && lease.capNanos() - now > 0) {
						due.add(lease);
					}
					else if (lease.capNanos() - now > 0) {
						earliest = Math.min(earliest, nextRenewal(lease));
					}
				}
			}
			int calls = 0;
			for (int from = 0; from < due.size(); from += BATCH) {
				renew(due.subList(from, Math.min(due.size(), from + BATCH)), now);
				calls++;
			}
			this.mostCallsInAPass = Math.max(this.mostCallsInAPass, calls);
			afterPass(earliest);
		}
		catch (Throwable ex) {
			logger.error("Lock watchdog pass failed; the next one runs as planned", ex);
			afterPass(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_DELAY_MILLIS));
		}
	}

	private void renew(List<Lease> batch, long sentNanos) {
		List<LockStore.Renewal> renewals = new ArrayList<>(batch.size());
		for (Lease lease : batch) {
			long wanted = lease.renewal().renewalNanos(sentNanos);
			long grant = Math.min(wanted, lease.capNanos() - sentNanos);
			lease.renewal().sent(sentNanos, grant < wanted);
			renewals.add(new LockStore.Renewal(lease.id(), lease.owner(),
					Math.max(1, TimeUnit.NANOSECONDS.toMillis(grant))));
		}
		this.store.renew(renewals)
			.orTimeout(this.store.commandTimeout().toNanos(), TimeUnit.NANOSECONDS)
			.whenCompleteAsync((granted, failure) -> {
				try {
					if (failure != null) {
						failed(batch, failure);
					}
					else {
						confirmed(batch, granted, sentNanos);
					}
				}
				catch (Throwable ex) {
					logger.error("Applying a lease renewal failed", ex);
				}
			}, this.scheduler);
	}

	private void confirmed(List<Lease> batch, long[] granted, long sentNanos) {
		for (int i = 0; i < batch.size(); i++) {
			Lease lease = batch.get(i);
			if (granted[i] > 0) {
				lease.renewal()
					.confirmed(sentNanos, TimeUnit.MILLISECONDS.toNanos(granted[i]), lease.state() == Lease.State.HELD);
			}
			else if (granted[i] < 0) {
				lease.renewal().cappedNow();
			}
			else {
				lease.renewal().answered();
				// a renewal answered after the local deadline may have come after the
				// expiry
				lease.lose((System.nanoTime() - lease.deadlineNanos() >= 0)
						? "the lease ran out by the local clock before a renewal was confirmed (the renewal found the key gone)"
						: "renewal found a key of the lock gone or held by another owner");
			}
		}
	}

	private void failed(List<Lease> batch, Throwable failure) {
		String message = (failure instanceof java.util.concurrent.TimeoutException)
				? "no answer within " + DurationFormat.format(this.store.commandTimeout())
				: failure.getClass().getSimpleName() + ": " + failure.getMessage();
		this.lastFailure = message;
		logger.debug("Lease renewal of {} lock(s) failed: {}", batch.size(), message);
		batch.forEach((lease) -> lease.renewal().failed(message));
		schedule(System.nanoTime());
	}

	private static long nextRenewal(Lease lease) {
		return lease.renewal().lastSentNanos() + lease.renewal().periodNanos();
	}

	private String expiryReason(Lease lease, long now) {
		boolean cappedExtension = lease.renewal().extended() && lease.renewal().capped();
		if (!lease.renewed() && !cappedExtension) {
			return "its fixed lease of " + DurationFormat.format(Duration.ofNanos(lease.leaseNanos()))
					+ (lease.renewal().extended() ? ", extended," : "") + " ran out while held";
		}
		if (lease.renewal().capped()) {
			return "max-hold-time of "
					+ DurationFormat.format(Duration.ofNanos(lease.capNanos() - lease.acquiredNanos())) + " reached";
		}
		if (lease.renewal().error() != null) {
			return "no renewal confirmed before the lease ran out by the local clock (unreachable: "
					+ lease.renewal().error() + ")";
		}
		return "no renewal confirmed before the lease ran out by the local clock";
	}

	private synchronized void schedule(long atNanos) {
		if (this.scheduler.isShutdown()) {
			return;
		}
		long now = System.nanoTime();
		long at = Math.max(atNanos, now + MIN_DELAY_NANOS);
		if (this.next != null && this.nextAt - at <= 0) {
			return;
		}
		if (this.next != null) {
			this.next.cancel(false);
		}
		this.nextAt = at;
		this.next = this.scheduler.schedule(this::pass, at - now, TimeUnit.NANOSECONDS);
	}

	private synchronized void afterPass(long earliest) {
		if (!this.leases.isEmpty()) {
			schedule(Math.min(earliest, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_DELAY_MILLIS)));
		}
	}

	@Override
	public synchronized void close() {
		if (this.next != null) {
			this.next.cancel(false);
			this.next = null;
		}
		this.scheduler.shutdownNow();
	}

}
