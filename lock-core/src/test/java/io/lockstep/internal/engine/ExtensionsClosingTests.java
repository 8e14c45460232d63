package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * LockHandle.extend (Extensions) blocks its caller on a join() with no bound while the
 * reply is applied on the watchdog's executor: when the lock client closes (the
 * watchdog's executor shut down with shutdownNow) after the store answered but before the
 * watchdog's thread applied the reply, the queued application is dropped and the caller
 * waits forever, although the store answered within its command timeout.
 */
class ExtensionsClosingTests {

	/** A store whose renewals wait for the test to answer them. */
	private static final class PendingStore extends FakeStore {

		final List<CompletableFuture<long[]>> renewals = new CopyOnWriteArrayList<>();

		@Override
		public Attempt acquire(Acquire request) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<long[]> renew(List<Renewal> renewals) {
			CompletableFuture<long[]> reply = new CompletableFuture<>();
			this.renewals.add(reply);
			return reply;
		}

		@Override
		public Duration commandTimeout() {
			return Duration.ofMillis(500);
		}

	}

	@Test
	void anExtensionWhoseReplyComesAsTheClientClosesEndsWithinTheCommandTimeout() throws Exception {
		PendingStore store = new PendingStore();
		Watchdog watchdog = new Watchdog(store, new ArrayList<>());
		Extensions extensions = new Extensions(store, watchdog);
		long now = System.nanoTime();
		LockRequest request = new LockRequest(LockId.of("k"), "k", 0,
				new HoldTerms(TimeUnit.SECONDS.toNanos(30), false, 0, 0), false);
		Acquisition.Grant grant = new Acquisition.Grant("owner", new long[] { 1 }, now, TimeUnit.SECONDS.toNanos(30),
				Long.MAX_VALUE);
		Lease lease = new Lease(request, grant, Observation.NOOP, (l, from, to, reason) -> {
		}, (nanos) -> 0);
		CompletableFuture<Object> caller = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				caller.complete(extensions.extend(List.of(lease), TimeUnit.SECONDS.toNanos(60)));
			}
			catch (Throwable ex) {
				caller.complete(ex);
			}
		}, "extend-caller");
		thread.setDaemon(true);
		thread.start();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (store.renewals.isEmpty() && System.nanoTime() - deadline < 0) {
			Thread.onSpinWait();
		}
		assertThat(store.renewals).hasSize(1);
		// the store answers within its command timeout while the watchdog's thread is
		// busy
		// with a pass (here: a task that waits for a latch), so the reply's application
		// is queued behind it; then the client closes
		java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
		java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
		watchdog.executor().execute(() -> {
			running.countDown();
			try {
				busy.await(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
		store.renewals.get(0).complete(new long[] { 60_000 });
		watchdog.close();
		busy.countDown();
		Object outcome = null;
		try {
			outcome = caller.get(3, TimeUnit.SECONDS);
		}
		catch (java.util.concurrent.TimeoutException ex) {
			// reported below
		}
		System.out.printf("extend() after the client closed mid-round-trip: %s (caller thread %s)%n",
				(outcome != null) ? outcome : "still blocked 3 s later (command timeout 500 ms)", thread.getState());
		assertThat(outcome).as("extend() returns or throws within its command timeout").isNotNull();
	}

}
