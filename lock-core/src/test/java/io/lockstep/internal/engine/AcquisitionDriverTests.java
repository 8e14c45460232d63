package io.lockstep.internal.engine;

import java.lang.reflect.Field;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two drivers of an {@link Acquisition} ({@link BlockingAcquirer},
 * {@link AsyncAcquirer}) and the run they share: the asking gate across a cancel, a
 * confirming attempt, an observation handler's failure, a failed re-check, an Error on a
 * worker. Over a fake hand-off backend (pure logic: the storage's replies are scripted
 * per attempt).
 */
class AcquisitionDriverTests {

	private final FakeBackend backend = new FakeBackend();

	private final LockEngine engine = new LockEngine(new Storage(this.backend, this.backend),
			EngineOptions.defaults("p:"));

	@AfterEach
	void close() {
		this.engine.close();
	}

	/**
	 * A reactive acquisition cancelled while its first attempt is on its way ends the
	 * key's asking gate: a later uncontended caller asks at once, without registering as
	 * a local waiter.
	 */
	@Test
	void aReactiveAcquisitionCancelledDuringItsFirstAttemptLeavesLaterUncontendedCallersWithoutRegistration()
			throws Exception {
		CompletableFuture<LockStore.Attempt> never = new CompletableFuture<>();
		this.backend.asyncReplies.add(never);
		CompletableFuture<LeaseHandle> first = this.engine.acquireAsync(request("k", 5000, false, false));
		assertThat(this.backend.attempts.get()).isEqualTo(1);
		first.cancel(false);
		assertThat(this.backend.leaves).as("the cancel left the queue").hasSize(1);

		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 1 }));
		LeaseHandle second = this.engine.acquire(request("k", 5000, false, false));
		second.close();
		assertThat(this.backend.prepared.get())
			.as("registrations of an uncontended caller after the cancelled one (gate still taken: %s)",
					!this.engine.waiters().beginAsking("k"))
			.isZero();
	}

	/**
	 * The first caller queues with its first attempt (slow: 160 ms of a 300 ms lease);
	 * the hand-off comes before its reply, so it is claimed at registration with less
	 * than half its lease left, and the machine answers "confirm by one more attempt".
	 * The Registered answer after it is empty: the driver keeps the Send and acquires by
	 * one more attempt.
	 */
	@Test
	void aBlockingCallerWhoseEarlyHandOffNeedsConfirmingAcquiresByOneMoreAttempt() {
		this.backend.replies.add(() -> {
			sleep(160); // a slow round trip
			this.backend.handOffs.handedOff("p:k", this.backend.lastOwner, 7, 300);
			return LockStore.Attempt.held(100, 0, 6);
		});
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 7 }, 250));
		assertThatCode(() -> {
			try (LeaseHandle handle = this.engine.acquire(request("p:k", 5000, 300, false, false))) {
				assertThat(handle.fencingToken()).isEqualTo(7);
			}
		}).doesNotThrowAnyException();
		assertThat(this.backend.attempts.get()).as("the confirming attempt").isEqualTo(2);
	}

	/**
	 * An observation handler that throws when the acquire observation stops (user code)
	 * must not escape after the grant became a lease (the lease would stay registered,
	 * renewed by the watchdog, with no handle to release it): the failure is logged and
	 * the caller gets its handle.
	 */
	@Test
	void anObservationHandlerThatThrowsAtTheAcquiresStopLeavesNoLeaseBehind() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStop(Observation.Context context) {
				if (context instanceof LockObservationContext lock
						&& lock.getKind() == LockObservationContext.Kind.ACQUIRE) {
					throw new IllegalStateException("handler failed");
				}
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		try (LockEngine observed = new LockEngine(new Storage(this.backend, this.backend),
				EngineOptions.defaults("p:").withObservations(new LockObservations(registry, null)))) {
			this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 1 }));
			// the handler's failure is logged: the caller gets its handle, and closing it
			// leaves nothing registered
			LeaseHandle handle = observed.acquire(request("k", 5000, true, false));
			assertThat(handle.isHeld()).isTrue();
			handle.close();
			assertThat(observed.registered()).as("leases left registered (held, renewed, no handle)").isZero();
		}
	}

	/**
	 * Only a lock held by another owner is worth waiting for: a queued waiter whose
	 * re-check fails ends at once with that failure (not at the end of its 30 s wait),
	 * after leaving the queue under the owner token it queued with.
	 */
	@Test
	void aBlockingWaiterWhoseRecheckFailsEndsAtOnceAndLeavesTheQueue() {
		LockException refused = new LockException("Redis failed to acquire 'k': NOPERM");
		this.backend.replies.add(() -> LockStore.Attempt.held(20_000, 0, 5));
		this.backend.replies.add(() -> {
			throw refused;
		});
		long start = System.nanoTime();
		assertThatThrownBy(() -> this.engine.acquire(request("k", 30_000, false, false)))
			.isExactlyInstanceOf(LockException.class)
			.hasMessage("Could not acquire lock 'k': Redis failed to acquire 'k': NOPERM")
			.hasCause(refused);
		long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		assertThat(millis).as("ms to fail (re-check after 500 ms, wait 30 s)").isLessThan(5_000);
		assertThat(this.backend.attempts.get()).as("attempts").isEqualTo(2);
		assertThat(this.backend.leaves).as("left the queue under its owner token")
			.containsExactly(this.backend.lastOwner);
		assertThat(this.engine.waitersOf("k")).as("local waiters left").isZero();
	}

	/** The same rule for the asynchronous driver: one attempt, and the future fails. */
	@Test
	void aReactiveAcquisitionWhoseAttemptFailsEndsAtOnceAfterOneAttempt() {
		LockException timedOut = new LockException("Redis did not answer within 1s to acquire 'k'");
		this.backend.asyncReplies.add(CompletableFuture.failedFuture(timedOut));
		CompletableFuture<LeaseHandle> acquiring = this.engine.acquireAsync(request("k", 30_000, false, false));
		assertThatThrownBy(() -> acquiring.get(5, TimeUnit.SECONDS)).as("ended within 5 s, the wait being 30 s")
			.isInstanceOf(ExecutionException.class)
			.cause()
			.isExactlyInstanceOf(LockException.class)
			.hasMessage("Could not acquire lock 'k': Redis did not answer within 1s to acquire 'k'")
			.hasCause(timedOut);
		assertThat(this.backend.attempts.get()).as("attempts").isEqualTo(1);
		assertThat(this.engine.waitersOf("k")).as("local waiters left").isZero();
	}

	/**
	 * An Error on a worker's drain (here from the backend's attempt; equally from user
	 * code such as an observation handler) aborts the acquisition: the caller's future
	 * completes and the waiter leaves its local queue.
	 */
	@Test
	void anErrorWhileAWorkerFeedsAnEventStillEndsTheReactiveAcquisition() throws Exception {
		this.backend.asyncReplies.add(CompletableFuture.completedFuture(LockStore.Attempt.held(50, 0, 5)));
		this.backend.asyncFailure = new AssertionError("attempt blew up");
		CompletableFuture<LeaseHandle> acquiring = this.engine.acquireAsync(request("k", 3000, false, false));
		assertThatThrownBy(() -> acquiring.get(6, TimeUnit.SECONDS)).as("ended within 6 s, the wait being 3 s")
			.isInstanceOf(ExecutionException.class);
		assertThat(this.engine.waitersOf("k")).as("local waiters left").isZero();
	}

	/**
	 * After such an Error the key is not held up: the aborted acquisition does not stay
	 * the local head of the hand-off waiters, so a later blocking caller is granted at
	 * once, not only when its whole wait has run out.
	 */
	@Test
	void afterAnErrorOnAWorkerTheKeyIsStillAcquirable() throws Exception {
		this.backend.asyncReplies.add(CompletableFuture.completedFuture(LockStore.Attempt.held(50, 0, 5)));
		this.backend.asyncFailure = new AssertionError("attempt blew up");
		this.engine.acquireAsync(request("k", 3000, false, false));
		assertThat(this.backend.failedAttempt.await(5, TimeUnit.SECONDS)).as("its second attempt threw").isTrue();
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 9 }));
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 9 }));
		long start = System.nanoTime();
		try (LeaseHandle handle = this.engine.acquire(request("k", 4000, false, false))) {
			assertThat(handle.fencingToken()).isEqualTo(9);
		}
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
			.as("ms to acquire a key the storage grants at once (the wait is 4,000 ms)")
			.isLessThan(2000);
	}

	/**
	 * The first caller took the key's asking gate, then asking whether its client hears
	 * hand-offs failed: the acquisition ends with that failure, and the gate with it, so
	 * that the key's next uncontended caller asks at once instead of registering first.
	 */
	@Test
	void aFailureAfterTheGateWasTakenEndsTheGate() {
		this.backend.hearsFailure = new IllegalStateException("channel broke");
		assertThatThrownBy(() -> this.engine.acquire(request("k", 5000, false, false)))
			.isInstanceOf(IllegalStateException.class)
			.hasMessage("channel broke");
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 1 }));
		this.engine.acquire(request("k", 5000, false, false)).close();
		assertThat(this.backend.prepared.get())
			.as("registrations of the next uncontended caller (gate still taken: %s)",
					!this.engine.waiters().beginAsking("k"))
			.isZero();
	}

	/**
	 * A reactive acquisition cancelled while the lock its client's release handed it
	 * waits for a worker: the cancel gives the lock back, and the grant the machine then
	 * concludes (a lock no caller ever got) is given back too, never reported lost. The
	 * workers are held busy so that the hand-off is in the inbox when the cancel comes.
	 */
	@Test
	void aReactiveAcquisitionCancelledWhileItsHandedLockWaitsForAWorkerReportsNoLoss() throws Exception {
		FakeBackend store = new FakeBackend();
		store.namesSuccessors = true;
		try (LockEngine successors = new LockEngine(new Storage(store, store), EngineOptions.defaults("p:"))) {
			Handed handed = handedWhileWorkersBusy(successors, store);
			handed.b().cancel(false);
			handed.workers().countDown();
			assertThat(store.leaves).as("the cancel gave the handed lock back").contains(store.handedTo);
			assertGivenBackWithoutLoss(successors, store);
		}
	}

	/**
	 * The same when the cancel comes while the worker concludes the grant, after the
	 * driver could last have seen it: the worker waits for the local queues' monitor in
	 * {@code conclude}, the cancel in {@code leaveQueueNow}. Whichever takes the monitor
	 * first, the grant is given back and nothing is reported lost.
	 */
	@Test
	void aReactiveAcquisitionCancelledWhileItsGrantIsConcludedReportsNoLoss() throws Exception {
		FakeBackend store = new FakeBackend();
		store.namesSuccessors = true;
		try (LockEngine successors = new LockEngine(new Storage(store, store), EngineOptions.defaults("p:"))) {
			Handed handed = handedWhileWorkersBusy(successors, store);
			Field waiting = LocalQueues.class.getDeclaredField("waiting");
			waiting.setAccessible(true);
			Object monitor = waiting.get(successors.waiters());
			CountDownLatch holding = new CountDownLatch(1);
			CountDownLatch letGo = new CountDownLatch(1);
			Thread holder = new Thread(() -> {
				synchronized (monitor) {
					holding.countDown();
					await(letGo);
				}
			});
			holder.start();
			assertThat(holding.await(5, TimeUnit.SECONDS)).as("the queues' monitor held").isTrue();
			handed.workers().countDown();
			awaitBlockedIn("conclude");
			Thread canceller = new Thread(() -> handed.b().cancel(false));
			canceller.start();
			awaitBlockedIn("leaveQueueNow");
			letGo.countDown();
			canceller.join(5000);
			holder.join(5000);
			assertGivenBackWithoutLoss(successors, store);
		}
	}

	/**
	 * A waits in the key's queue and B (asynchronous) behind it; A gets the lock, so B is
	 * promoted behind it; every worker is held busy; A's release names B and hands it the
	 * lock, which waits in B's inbox.
	 */
	private static Handed handedWhileWorkersBusy(LockEngine engine, FakeBackend store) throws Exception {
		// A's attempt, and its re-checks, find the key held
		for (int i = 0; i < 20; i++) {
			store.replies.add(() -> LockStore.Attempt.held(20_000, 0, 5));
		}
		CountDownLatch aHolds = new CountDownLatch(1);
		CountDownLatch aReleases = new CountDownLatch(1);
		CompletableFuture<Void> a = CompletableFuture.runAsync(() -> {
			try (LeaseHandle handle = engine.acquire(request("k", 10_000, false, false))) {
				aHolds.countDown();
				await(aReleases);
			}
		});
		assertThat(store.queued.await(5, TimeUnit.SECONDS)).as("A queued").isTrue();
		String aOwner = store.lastOwner;
		awaitWaiters(engine, "k", 1);
		CompletableFuture<LeaseHandle> b = engine.acquireAsync(request("k", 10_000, false, false));
		awaitWaiters(engine, "k", 2);
		store.handOffs.handedOff("k", aOwner, 7, 30_000);
		assertThat(aHolds.await(5, TimeUnit.SECONDS)).as("A holds").isTrue();
		CountDownLatch workers = new CountDownLatch(1);
		busyWorkers(engine, workers);
		aReleases.countDown();
		a.get(5, TimeUnit.SECONDS);
		assertThat(store.handedTo).as("A's release handed the lock to B").isNotNull();
		return new Handed(b, workers);
	}

	/** B's future, and the latch that frees the workers. */
	private record Handed(CompletableFuture<LeaseHandle> b, CountDownLatch workers) {
	}

	/** The grant reached the store again, and every worker finished: nothing lost. */
	private static void assertGivenBackWithoutLoss(LockEngine engine, FakeBackend store) throws Exception {
		assertThat(store.endedGrant.await(5, TimeUnit.SECONDS)).as("B's grant given back").isTrue();
		CountDownLatch idle = new CountDownLatch(1);
		busyWorkers(engine, idle);
		idle.countDown();
		assertThat(engine.leasesLost()).as("leases reported lost").isZero();
		assertThat(engine.registered()).as("leases left registered").isZero();
		assertThat(store.owner).as("the key's holder in the store").isNull();
	}

	/** Waits, bounded, until a thread is blocked on a monitor inside the method. */
	private static void awaitBlockedIn(String method) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (System.nanoTime() < deadline) {
			for (Map.Entry<Thread, StackTraceElement[]> thread : Thread.getAllStackTraces().entrySet()) {
				if (thread.getKey().getState() == Thread.State.BLOCKED
						&& Arrays.stream(thread.getValue()).anyMatch((frame) -> frame.getMethodName().equals(method))) {
					return;
				}
			}
			Thread.sleep(1);
		}
		throw new AssertionError("no thread blocked in " + method);
	}

	/**
	 * Occupies every worker of the engine (platform workers, as the tests' engines have)
	 * until {@code go} opens; returns once they all run (each has finished what it ran
	 * before).
	 */
	private static void busyWorkers(LockEngine engine, CountDownLatch go) throws InterruptedException {
		int workers = Math.max(2, Runtime.getRuntime().availableProcessors());
		CountDownLatch running = new CountDownLatch(workers);
		for (int i = 0; i < workers; i++) {
			engine.asyncThreads().workers().execute(() -> {
				running.countDown();
				await(go);
			});
		}
		assertThat(running.await(5, TimeUnit.SECONDS)).as("every worker busy").isTrue();
	}

	/** Waits, bounded, until the key has that many local waiters. */
	private static void awaitWaiters(LockEngine engine, String key, int waiters) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (engine.waitersOf(key) != waiters && System.nanoTime() < deadline) {
			Thread.onSpinWait();
			Thread.sleep(1);
		}
		assertThat(engine.waitersOf(key)).as("local waiters of '%s'", key).isEqualTo(waiters);
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Models elapsed time: the fake store's slow round trip (not synchronisation). */
	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** A request of lock "job" with a 30 s lease. */
	private static LockRequest request(String key, long waitMillis, boolean renewed, boolean skips) {
		return request(key, waitMillis, 30_000, renewed, skips);
	}

	private static LockRequest request(String key, long waitMillis, long leaseMillis, boolean renewed, boolean skips) {
		return new LockRequest(LockId.of(key), "job", ms(waitMillis), new HoldTerms(ms(leaseMillis), renewed, 0, 0),
				skips);
	}

	private static long ms(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

	/** A store that hands off, and replies as scripted; and its wake-up channel. */
	private static final class FakeBackend extends FakeStore {

		final List<java.util.function.Supplier<Attempt>> replies = new CopyOnWriteArrayList<>();

		final List<CompletableFuture<Attempt>> asyncReplies = new CopyOnWriteArrayList<>();

		final AtomicInteger attempts = new AtomicInteger();

		final List<String> leaves = new CopyOnWriteArrayList<>();

		volatile String lastOwner;

		volatile Error asyncFailure;

		final CountDownLatch failedAttempt = new CountDownLatch(1);

		volatile HandOffListener handOffs;

		/** Whether releases hand locks to successors. */
		volatile boolean namesSuccessors;

		/**
		 * The key's holder (successor tests only): set by a hand-off, cleared by a leave.
		 */
		volatile String owner;

		volatile String handedTo;

		final CountDownLatch queued = new CountDownLatch(1);

		/** A release or undo of the successor's owner token. */
		final CountDownLatch endedGrant = new CountDownLatch(1);

		FakeBackend() {
			this.handsOff = true;
			this.hears = true;
		}

		@Override
		public Attempt acquire(Acquire request) {
			this.lastOwner = request.owner();
			this.attempts.incrementAndGet();
			Attempt reply = this.replies.remove(0).get();
			this.queued.countDown();
			return reply;
		}

		@Override
		public CompletableFuture<Attempt> acquireAsync(Acquire request, java.util.concurrent.Executor blocking) {
			this.lastOwner = request.owner();
			this.attempts.incrementAndGet();
			if (this.asyncReplies.isEmpty() && this.asyncFailure != null) {
				this.failedAttempt.countDown();
				throw this.asyncFailure;
			}
			return this.asyncReplies.remove(0);
		}

		@Override
		public void onHandOff(HandOffListener listener) {
			this.handOffs = listener;
		}

		@Override
		public boolean handsToSuccessors() {
			return this.namesSuccessors;
		}

		@Override
		public int release(Release request, Successor successor) {
			if (successor == null) {
				return release(request);
			}
			this.handedTo = successor.owner();
			this.owner = successor.owner();
			successor.handed().accept(8);
			return 1;
		}

		@Override
		public int release(Release request) {
			if (request.mode() == Release.Mode.LEAVE) {
				this.leaves.add(request.owner());
			}
			if (!this.namesSuccessors) {
				return super.release(request);
			}
			boolean held = request.owner().equals(this.owner);
			if (held) {
				this.owner = null;
			}
			if (request.mode() != Release.Mode.LEAVE && request.owner().equals(this.handedTo)) {
				this.endedGrant.countDown();
			}
			return held ? 1 : 0;
		}

	}

}
