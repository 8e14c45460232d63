package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches every held lease on one shared scheduler thread. Each tick (every 50 ms while
 * any lease is held) it declares lost the leases whose local deadline passed, and renews,
 * in batches of up to {@value #BATCH} keys per round trip, the watchdog leases a third of
 * whose lease has passed since the last renewal was sent. It never renews a released
 * lease, a lease whose acquiring thread has ended (unless the lease was detached from it
 * for asynchronous work), or past {@code max-hold-time}.
 */
final class Watchdog implements AutoCloseable {

	static final int BATCH = 250;

	private static final long TICK_MILLIS = 50;

	private static final Logger logger = LoggerFactory.getLogger(Watchdog.class);

	private final LockCommands commands;

	private final ScheduledExecutorService scheduler;

	private final Duration maxHoldTime;

	private final BiConsumer<Lease, String> onLost;

	private final Consumer<Lease> onAbandoned;

	private final Set<Lease> leases = ConcurrentHashMap.newKeySet();

	private final Set<Lease> inFlight = ConcurrentHashMap.newKeySet();

	private ScheduledFuture<?> ticking;

	private volatile long lastFailureNanos;

	private volatile long lastSuccessNanos;

	private volatile String lastFailure;

	private volatile int mostRoundTripsInATick;

	Watchdog(LockCommands commands, ScheduledExecutorService scheduler, Duration maxHoldTime,
			BiConsumer<Lease, String> onLost, Consumer<Lease> onAbandoned) {
		this.commands = commands;
		this.scheduler = scheduler;
		this.maxHoldTime = maxHoldTime;
		this.onLost = onLost;
		this.onAbandoned = onAbandoned;
	}

	void watch(Lease lease) {
		this.leases.add(lease);
		synchronized (this) {
			if (this.ticking == null) {
				this.ticking = this.scheduler.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS,
						TimeUnit.MILLISECONDS);
			}
		}
	}

	void unwatch(Lease lease) {
		this.leases.remove(lease);
	}

	java.util.Collection<Lease> leases() {
		return this.leases;
	}

	/** Leases watched now (held, not yet released or lost). */
	int size() {
		return this.leases.size();
	}

	/**
	 * Whether leases are held and the most recent renewal attempt failed to reach Redis.
	 */
	boolean renewalsFailing() {
		return !this.leases.isEmpty() && this.lastFailureNanos != 0
				&& this.lastFailureNanos - this.lastSuccessNanos > 0;
	}

	/** The most renewal round trips any one tick has sent. */
	int mostRoundTripsInATick() {
		return this.mostRoundTripsInATick;
	}

	String lastFailure() {
		return this.lastFailure;
	}

	void tick() {
		try {
			long now = System.nanoTime();
			List<Lease> due = new ArrayList<>();
			for (Lease lease : this.leases) {
				check(lease, now, due);
			}
			int roundTrips = 0;
			for (int from = 0; from < due.size(); from += BATCH) {
				renew(due.subList(from, Math.min(due.size(), from + BATCH)), now);
				roundTrips++;
			}
			this.mostRoundTripsInATick = Math.max(this.mostRoundTripsInATick, roundTrips);
			stopWhenIdle();
		}
		catch (RuntimeException ex) {
			logger.error("Lock watchdog tick failed", ex);
		}
	}

	private void check(Lease lease, long now, List<Lease> due) {
		if (!lease.isActive()) {
			this.leases.remove(lease);
		}
		else if (now - lease.deadlineNanos() >= 0) {
			this.leases.remove(lease);
			this.onLost.accept(lease, expiryReason(lease));
		}
		else if (!lease.renewed() || this.inFlight.contains(lease)
				|| now - lease.lastRenewSentNanos() < lease.leaseNanos() / 3) {
			return;
		}
		else if (!lease.detached() && !lease.holder().isAlive()) {
			this.leases.remove(lease);
			if (lease.markAbandoned()) {
				this.onAbandoned.accept(lease);
				logger.warn(
						"Thread '{}' ended without releasing lock '{}'; renewal stopped, the lease expires on its own",
						lease.holder().getName(), lease.key());
			}
		}
		else if (grantNanos(lease, now) > 0) {
			due.add(lease);
		}
	}

	private void renew(List<Lease> batch, long sentNanos) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>();
		long[] granted = new long[batch.size()];
		for (int i = 0; i < batch.size(); i++) {
			Lease lease = batch.get(i);
			granted[i] = grantNanos(lease, sentNanos);
			this.inFlight.add(lease);
			lease.renewSent(sentNanos);
			for (String key : lease.keys()) {
				keys.add(key);
				args.add(lease.ownerToken());
				args.add(Long.toString(Math.max(1, TimeUnit.NANOSECONDS.toMillis(granted[i]))));
			}
		}
		this.commands.<List<Long>>evalAsync(LockCommands.RENEW, keys, args)
			.orTimeout(this.commands.timeout().toMillis(), TimeUnit.MILLISECONDS)
			.whenComplete((results, failure) -> {
				batch.forEach(this.inFlight::remove);
				if (failure != null) {
					failed(batch, failure);
				}
				else {
					confirmed(batch, results, sentNanos, granted);
				}
			});
	}

	private void confirmed(List<Lease> batch, List<Long> results, long sentNanos, long[] granted) {
		this.lastSuccessNanos = System.nanoTime();
		int index = 0;
		for (int i = 0; i < batch.size(); i++) {
			Lease lease = batch.get(i);
			String missing = null;
			for (String key : lease.keys()) {
				if (results.get(index++) != 1L && missing == null) {
					missing = key;
				}
			}
			if (missing == null) {
				lease.renewConfirmed(sentNanos, granted[i]);
			}
			else if (lease.isActive()) {
				this.leases.remove(lease);
				this.onLost.accept(lease, "renewal found key '" + missing + "' gone or held by another owner");
			}
		}
	}

	private void failed(List<Lease> batch, Throwable failure) {
		String message = failure.getClass().getSimpleName() + ": " + failure.getMessage();
		this.lastFailure = message;
		this.lastFailureNanos = System.nanoTime();
		logger.debug("Lease renewal of {} lock(s) failed: {}", batch.size(), message);
		batch.forEach((lease) -> lease.renewalFailed(message));
	}

	/**
	 * The lease to grant now: the full lease, or less so as never to pass max-hold-time.
	 */
	private long grantNanos(Lease lease, long now) {
		if (this.maxHoldTime == null) {
			return lease.leaseNanos();
		}
		long left = lease.acquiredNanos() + this.maxHoldTime.toNanos() - now;
		return Math.min(lease.leaseNanos(), left);
	}

	private String expiryReason(Lease lease) {
		if (!lease.renewed()) {
			return "its fixed lease of " + Duration.ofNanos(lease.leaseNanos()) + " ran out while held";
		}
		if (lease.renewalError() != null) {
			return "no renewal confirmed before the lease ran out by the local clock (Redis unreachable: "
					+ lease.renewalError() + ")";
		}
		if (this.maxHoldTime != null && System.nanoTime() - lease.acquiredNanos() >= this.maxHoldTime.toNanos()) {
			return "max-hold-time of " + this.maxHoldTime + " reached";
		}
		return "no renewal confirmed before the lease ran out by the local clock";
	}

	private synchronized void stopWhenIdle() {
		if (this.leases.isEmpty() && this.ticking != null) {
			this.ticking.cancel(false);
			this.ticking = null;
		}
	}

	/**
	 * Stops watching; leases still held are abandoned (their keys expire on their own).
	 */
	@Override
	public synchronized void close() {
		if (this.ticking != null) {
			this.ticking.cancel(false);
			this.ticking = null;
		}
		this.leases.forEach(Lease::markAbandoned);
		this.leases.clear();
	}

}
