package io.lockstep.autoconfigure;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Runs work on another thread and waits for it (bounded): locks are reentrant per thread,
 * so "held elsewhere" needs another thread.
 */
final class OtherThread implements AutoCloseable {

	private final ExecutorService executor = Executors.newSingleThreadExecutor();

	<T> T call(Callable<T> work) throws Exception {
		try {
			return this.executor.submit(work).get(10, TimeUnit.SECONDS);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
