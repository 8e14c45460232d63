package io.lockstep.internal.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's threads for acquisitions that wait without a thread of their own: one
 * timer thread ({@code lockstep-async-timer}: asks again at the holder's remaining lease,
 * a periodic re-check or a poll; its tasks never block, so it stays a platform thread)
 * and worker threads ({@code lockstep-async-N}) that complete the caller-visible futures,
 * so that the caller's code never runs on the storage client's I/O threads, and that run
 * what may block: a release (bounded by the command timeout), readying the notification
 * channel, an attempt of a store without an asynchronous client. The workers are a few
 * daemon platform threads, or, where the application asked for virtual threads, a virtual
 * thread per task. Handing a task over never blocks the caller (a lock-free queue). A
 * failing task is logged and harms no other. Created on first use, closed with the
 * engine.
 */
final class AsyncThreads implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(AsyncThreads.class);

	private final ScheduledThreadPoolExecutor timer;

	private final Executor workers;

	private final Runnable stopWorkers;

	/**
	 * @param virtual whether the workers are virtual threads (JDK 21+)
	 */
	AsyncThreads(boolean virtual) {
		this.timer = new ScheduledThreadPoolExecutor(1, LockThreads.platform("lockstep-async-timer"));
		this.timer.setRemoveOnCancelPolicy(true);
		if (virtual) {
			LockThreads.PerTask perTask = new LockThreads.PerTask(LockThreads.virtual("lockstep-async-"));
			this.workers = perTask;
			this.stopWorkers = perTask::shutdown;
		}
		else {
			AtomicInteger count = new AtomicInteger();
			int size = Math.max(2, Runtime.getRuntime().availableProcessors());
			ThreadPoolExecutor pool = new ThreadPoolExecutor(size, size, 10, TimeUnit.SECONDS,
					new LinkedTransferQueue<>(), (task) -> daemon(task, "lockstep-async-" + count.incrementAndGet()));
			pool.allowCoreThreadTimeOut(true);
			this.workers = pool;
			this.stopWorkers = pool::shutdown;
		}
	}

	/** The worker threads; may block, bounded. */
	Executor workers() {
		return (task) -> run(this.workers, task);
	}

	/** Runs a task that never blocks on the timer thread after the delay. */
	ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
		try {
			return this.timer.schedule(() -> safely(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			throw new LockException("The lock client is closed", ex);
		}
	}

	private static void run(Executor executor, Runnable task) {
		try {
			executor.execute(() -> safely(task));
		}
		catch (RejectedExecutionException ex) {
			throw new LockException("The lock client is closed", ex);
		}
	}

	private static void safely(Runnable task) {
		try {
			task.run();
		}
		catch (Throwable ex) {
			logger.error("A lock task failed", ex);
		}
	}

	private static Thread daemon(Runnable task, String name) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	@Override
	public void close() {
		this.timer.shutdownNow();
		this.stopWorkers.run();
	}

}
