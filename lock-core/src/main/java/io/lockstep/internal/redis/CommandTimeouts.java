package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fails the bounded commands Redis did not answer in time
 * ({@link LockCommands#evalBounded}): one daemon thread
 * ({@code lockstep-command-timeout}, started on first use, ended after 10 s without a
 * pending timeout), whose tasks never block and are removed when cancelled.
 */
final class CommandTimeouts {

	private static final Logger logger = LoggerFactory.getLogger(CommandTimeouts.class);

	private static final ScheduledThreadPoolExecutor TIMEOUTS = timeouts();

	private CommandTimeouts() {
	}

	private static ScheduledThreadPoolExecutor timeouts() {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "lockstep-command-timeout");
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		executor.setKeepAliveTime(10, TimeUnit.SECONDS);
		executor.allowCoreThreadTimeOut(true);
		return executor;
	}

	static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
		return TIMEOUTS.schedule(() -> {
			try {
				task.run();
			}
			catch (Throwable ex) {
				logger.error("A lock command's timeout task failed", ex);
			}
		}, delay.toNanos(), TimeUnit.NANOSECONDS);
	}

	/** The timeout tasks of bounded commands not completed yet (for tests). */
	static int pendingTimeouts() {
		return TIMEOUTS.getQueue().size();
	}

	/** The timeout tasks of bounded commands not completed yet (for tests). */
	static int pending() {
		return TIMEOUTS.getQueue().size();
	}

}
