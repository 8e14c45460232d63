package io.lockstep.internal.engine;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys whose release notifications the {@link Waiters} listen to: a key is listened
 * to while it has local waiters and lingers a while after its last one left (its waiters
 * may come back soon), at most {@value #MAX_LINGERING} lingering keys. Owned by
 * {@link Waiters}, used under its monitor, which the scheduled sweep takes too.
 */
final class Listening {

	static final long LINGER_SECONDS = 5;

	private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(LINGER_SECONDS);

	/** At most this many keys stay subscribed without local waiters. */
	private static final int MAX_LINGERING = 1024;

	private static final Logger logger = LoggerFactory.getLogger(Listening.class);

	private final WakeUps wakeUps;

	private final ScheduledExecutorService scheduler;

	/** The waiters' monitor. */
	private final Object monitor;

	/** Keys whose release channel is subscribed (waited for, or lingering). */
	private final Set<String> listened = new HashSet<>();

	/**
	 * Keys subscribed without local waiters, by when their last waiter left; in order.
	 */
	private final Map<String, Long> lingering = new LinkedHashMap<>();

	private boolean sweepScheduled;

	private volatile boolean closed;

	/**
	 * @param scheduler runs the task that stops listening to keys that lingered long
	 * enough
	 * @param monitor the waiters' monitor, under which every method is called
	 */
	Listening(WakeUps wakeUps, ScheduledExecutorService scheduler, Object monitor) {
		this.wakeUps = wakeUps;
		this.scheduler = scheduler;
		this.monitor = monitor;
	}

	/**
	 * Listens to the key's releases (sent, not awaited).
	 * @return completes when notifications flow, or {@code null} when they do already
	 */
	CompletableFuture<?> listen(String key) {
		if (this.listened.add(key)) {
			return this.wakeUps.listen(key);
		}
		this.lingering.remove(key);
		return null;
	}

	/** The key's last waiter left: keeps it subscribed for a while, if it is. */
	void linger(String key) {
		if (this.listened.contains(key)) {
			this.lingering.put(key, System.nanoTime());
			sweep();
		}
	}

	/**
	 * Stops listening to the keys that lingered long enough, or the longest lingering
	 * beyond {@value #MAX_LINGERING}; schedules the next sweep while keys linger.
	 */
	private void sweep() {
		long now = System.nanoTime();
		Iterator<Map.Entry<String, Long>> oldest = this.lingering.entrySet().iterator();
		while (oldest.hasNext()) {
			Map.Entry<String, Long> entry = oldest.next();
			if (this.lingering.size() <= MAX_LINGERING && now - entry.getValue() < LINGER_NANOS) {
				break;
			}
			oldest.remove();
			this.listened.remove(entry.getKey());
			this.wakeUps.unlisten(entry.getKey());
		}
		if (!this.lingering.isEmpty() && !this.sweepScheduled && !this.closed) {
			long due = this.lingering.values().iterator().next() + LINGER_NANOS - now;
			try {
				this.scheduler.schedule(this::scheduledSweep, Math.max(due, 0) + 1_000_000L, TimeUnit.NANOSECONDS);
				this.sweepScheduled = true;
			}
			catch (RejectedExecutionException ex) {
				// shutting down: closing the wake-up channel ends every subscription
			}
		}
	}

	private void scheduledSweep() {
		try {
			synchronized (this.monitor) {
				this.sweepScheduled = false;
				sweep();
			}
		}
		catch (Throwable ex) {
			logger.warn("Stopping to listen to released keys failed; retrying later", ex);
		}
	}

	void close() {
		this.closed = true;
		this.lingering.clear();
		this.listened.clear();
	}

}
