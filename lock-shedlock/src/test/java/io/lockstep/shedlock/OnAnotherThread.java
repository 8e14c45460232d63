package io.lockstep.shedlock;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/** Runs a call on a thread of its own and waits for it, at most 10 s. */
final class OnAnotherThread {

	private OnAnotherThread() {
	}

	static <T> T call(Callable<T> call) throws Exception {
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			return thread.submit(call).get(10, TimeUnit.SECONDS);
		}
		finally {
			thread.shutdownNow();
		}
	}

}
