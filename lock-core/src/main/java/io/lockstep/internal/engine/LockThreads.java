package io.lockstep.internal.engine;

import java.lang.reflect.Method;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;

/**
 * Makes the threads Lockstep starts: daemon platform threads, or, where the application
 * asked for virtual threads ({@code spring.threads.virtual.enabled}, JDK 21+), virtual
 * threads for the tasks that may block or run user code (the asynchronous acquisitions'
 * workers, the lock-lost listeners). Timers stay on platform threads: their tasks never
 * block, and they must run on time even when the application's virtual threads keep every
 * carrier busy.
 */
final class LockThreads {

	private LockThreads() {
	}

	/** Daemon platform threads, all named {@code name}. */
	static ThreadFactory platform(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Virtual threads named {@code prefix} and a counter.
	 * @throws IllegalStateException on a JDK without virtual threads (before 21)
	 */
	static ThreadFactory virtual(String prefix) {
		try {
			Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
			Class<?> type = Class.forName("java.lang.Thread$Builder");
			Method name = type.getMethod("name", String.class, long.class);
			builder = name.invoke(builder, prefix, 1L);
			return (ThreadFactory) type.getMethod("factory").invoke(builder);
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException(
					"Virtual threads need JDK 21 or later; this is " + Runtime.version() + " (virtualThreads)", ex);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Cannot create virtual threads: " + ex, ex);
		}
	}

	/** Whether this JDK has virtual threads (21+). */
	static boolean virtualAvailable() {
		try {
			Thread.class.getMethod("ofVirtual");
			return true;
		}
		catch (NoSuchMethodException ex) {
			return false;
		}
	}

	/**
	 * Runs each task on a new thread of the factory (virtual threads are not pooled);
	 * rejects tasks once shut down.
	 */
	static final class PerTask implements Executor {

		private final ThreadFactory threads;

		private volatile boolean shutdown;

		PerTask(ThreadFactory threads) {
			this.threads = threads;
		}

		@Override
		public void execute(Runnable task) {
			if (this.shutdown) {
				throw new RejectedExecutionException("shut down");
			}
			this.threads.newThread(task).start();
		}

		void shutdown() {
			this.shutdown = true;
		}

	}

}
