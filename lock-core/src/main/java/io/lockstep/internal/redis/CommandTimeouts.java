package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fails the bounded commands Redis did not answer in time
 * ({@link LockCommands#evalBounded}): one daemon thread
 * ({@code lockstep-command-timeout}, started on first use, ended after 10 s without a
 * pending timeout), whose tasks never block. A task is cancelled when its command
 * completes, often on a Redis client's I/O thread, which must never wait for the
 * executor's queue lock: cancelling only marks the task, and the timeout thread itself
 * purges cancelled tasks from its queue every second while any are pending.
 */
final class CommandTimeouts {

	private static final Logger logger = LoggerFactory.getLogger(CommandTimeouts.class);

	private static final ScheduledThreadPoolExecutor TIMEOUTS = timeouts();

	/** Whether a purge of cancelled tasks is scheduled. */
	private static final AtomicBoolean purging = new AtomicBoolean();

	private CommandTimeouts() {
	}

	private static ScheduledThreadPoolExecutor timeouts() {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "lockstep-command-timeout");
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(false);
		executor.setKeepAliveTime(10, TimeUnit.SECONDS);
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
		ScheduledFuture<?> scheduled = TIMEOUTS.schedule(() -> {
			try {
				task.run();
			}
			catch (Throwable ex) {
				logger.error("A lock command's timeout task failed", ex);
			}
		}, delay.toNanos(), TimeUnit.NANOSECONDS);
		if (purging.compareAndSet(false, true)) {
			TIMEOUTS.schedule(CommandTimeouts::purge, 1, TimeUnit.SECONDS);
		}
		return scheduled;
	}

	/**
	 * On the timeout thread: removes cancelled tasks from the queue, and comes back in a
	 * second while tasks are pending.
	 */
	private static void purge() {
		try {
			TIMEOUTS.purge();
		}
		catch (Throwable ex) {
			logger.error("Purging cancelled command timeouts failed", ex);
		}
		purging.set(false);
		if (!TIMEOUTS.getQueue().isEmpty() && purging.compareAndSet(false, true)) {
			TIMEOUTS.schedule(CommandTimeouts::purge, 1, TimeUnit.SECONDS);
		}
	}

	/** The timeout tasks of bounded commands not completed yet (for tests). */
	static int pending() {
		return TIMEOUTS.getQueue().size();
	}

}
