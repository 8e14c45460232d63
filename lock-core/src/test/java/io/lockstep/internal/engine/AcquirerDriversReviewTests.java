package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

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
 * Review reproducers for the two drivers, over a fake hand-off backend (pure logic: the
 * storage's replies are scripted per attempt).
 */
class AcquirerDriversReviewTests {

	private final FakeBackend backend = new FakeBackend();

	private final LockEngine engine = new LockEngine(new Storage(this.backend, this.backend), "p:", null, List.of(),
			false, null, null, false);

	@AfterEach
	void close() {
		this.engine.close();
	}

	/**
	 * A reactive acquisition cancelled while its first attempt is on its way never ends
	 * the key's asking gate: every later caller of the key, even uncontended, registers
	 * as a local waiter before it may ask.
	 */
	@Test
	void aReactiveAcquisitionCancelledDuringItsFirstAttemptLeavesLaterUncontendedCallersWithoutRegistration()
			throws Exception {
		CompletableFuture<LockStore.Attempt> never = new CompletableFuture<>();
		this.backend.asyncReplies.add(never);
		CompletableFuture<LeaseHandle> first = this.engine.acquireAsync(LockId.of("k"), "job", ms(5000),
				new HoldTerms(ms(30_000), false, 0, 0), false);
		assertThat(this.backend.attempts.get()).isEqualTo(1);
		first.cancel(false);
		assertThat(this.backend.leaves).as("the cancel left the queue").hasSize(1);

		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 1 }));
		LeaseHandle second = this.engine.acquire(LockId.of("k"), "job", ms(5000),
				new HoldTerms(ms(30_000), false, 0, 0), true);
		second.close();
		assertThat(this.backend.preparedListening.get())
			.as("registrations of an uncontended caller after the cancelled one (gate still taken: %s)",
					!this.engine.waiters().beginAsking("k"))
			.isZero();
	}

	/**
	 * The first caller queues with its first attempt (slow: 160 ms of a 300 ms lease);
	 * the hand-off comes before its reply, so it is claimed at registration with less
	 * than half its lease left, and the machine answers "confirm by one more attempt".
	 * BlockingAcquirer.inOrder keeps only the Registered answer's action (none) and waits
	 * on a null Wait.
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
			try (LeaseHandle handle = this.engine.acquire(LockId.of("p:k"), "job", ms(5000),
					new HoldTerms(ms(300), false, 0, 0), true)) {
				assertThat(handle.fencingToken()).isEqualTo(7);
			}
		}).doesNotThrowAnyException();
		assertThat(this.backend.attempts.get()).as("the confirming attempt").isEqualTo(2);
	}

	/**
	 * An observation handler that throws when the acquire observation stops (user code)
	 * once escaped after the grant became a lease: the caller got the exception, and the
	 * lease stayed registered (renewed by the watchdog) with no handle to release it. Now
	 * the failure is logged and the caller gets its handle.
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
		try (LockEngine observed = new LockEngine(new Storage(this.backend, this.backend), "p:", null, List.of(), false,
				registry, null, false)) {
			this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 1 }));
			// the handler's failure is logged: the caller gets its handle, and closing it
			// leaves nothing registered
			LeaseHandle handle = observed.acquire(LockId.of("k"), "job", ms(5000),
					new HoldTerms(ms(30_000), true, 0, 0), true);
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
		assertThatThrownBy(() -> this.engine.acquire(LockId.of("k"), "job", ms(30_000),
				new HoldTerms(ms(30_000), false, 0, 0), true))
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
		CompletableFuture<LeaseHandle> acquiring = this.engine.acquireAsync(LockId.of("k"), "job", ms(30_000),
				new HoldTerms(ms(30_000), false, 0, 0), false);
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
	 * code such as an observation handler) escapes drain() without decrementing the
	 * pending count: no event is ever fed again, the caller's future never completes and
	 * the waiter stays registered.
	 */
	@Test
	void anErrorWhileAWorkerFeedsAnEventStillEndsTheReactiveAcquisition() throws Exception {
		this.backend.asyncReplies.add(CompletableFuture.completedFuture(LockStore.Attempt.held(50, 0, 5)));
		this.backend.asyncFailure = new AssertionError("attempt blew up");
		CompletableFuture<LeaseHandle> acquiring = this.engine.acquireAsync(LockId.of("k"), "job", ms(3000),
				new HoldTerms(ms(30_000), false, 0, 0), false);
		assertThatThrownBy(() -> acquiring.get(6, TimeUnit.SECONDS)).as("ended within 6 s, the wait being 3 s")
			.isInstanceOf(ExecutionException.class);
		assertThat(this.engine.waitersOf("k")).as("local waiters left").isZero();
	}

	/**
	 * What the stuck acquisition above costs the key: it stays the local head of the
	 * hand-off waiters and never asks again, so a later blocking caller registers behind
	 * it, is never promoted, and asks only when its whole wait has run out, although the
	 * storage would grant at once.
	 */
	@Test
	void afterAnErrorOnAWorkerTheKeyIsStillAcquirable() throws Exception {
		this.backend.asyncReplies.add(CompletableFuture.completedFuture(LockStore.Attempt.held(50, 0, 5)));
		this.backend.asyncFailure = new AssertionError("attempt blew up");
		this.engine.acquireAsync(LockId.of("k"), "job", ms(3000), new HoldTerms(ms(30_000), false, 0, 0), false);
		assertThat(this.backend.failedAttempt.await(5, TimeUnit.SECONDS)).as("its second attempt threw").isTrue();
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 9 }));
		this.backend.replies.add(() -> LockStore.Attempt.acquired(new long[] { 9 }));
		long start = System.nanoTime();
		try (LeaseHandle handle = this.engine.acquire(LockId.of("k"), "job", ms(4000),
				new HoldTerms(ms(30_000), false, 0, 0), true)) {
			assertThat(handle.fencingToken()).isEqualTo(9);
		}
		assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
			.as("ms to acquire a key the storage grants at once (the wait is 4,000 ms)")
			.isLessThan(2000);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static long ms(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

	/** A store that hands off, and replies as scripted; and its wake-up channel. */
	private static final class FakeBackend implements LockStore, WakeUps {

		final List<java.util.function.Supplier<Attempt>> replies = new CopyOnWriteArrayList<>();

		final List<CompletableFuture<Attempt>> asyncReplies = new CopyOnWriteArrayList<>();

		final AtomicInteger attempts = new AtomicInteger();

		final AtomicInteger preparedListening = new AtomicInteger();

		final List<String> leaves = new CopyOnWriteArrayList<>();

		volatile String lastOwner;

		volatile Error asyncFailure;

		final CountDownLatch failedAttempt = new CountDownLatch(1);

		volatile HandOffListener handOffs;

		@Override
		public Attempt acquire(Acquire request) {
			this.lastOwner = request.owner();
			this.attempts.incrementAndGet();
			return this.replies.remove(0).get();
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
		public boolean handsOff() {
			return true;
		}

		@Override
		public void onHandOff(HandOffListener listener) {
			this.handOffs = listener;
		}

		@Override
		public boolean hearsHandOffs(String key) {
			return true;
		}

		@Override
		public CompletableFuture<long[]> renew(List<Renewal> renewals) {
			return CompletableFuture.completedFuture(renewals.stream().mapToLong(Renewal::leaseMillis).toArray());
		}

		@Override
		public int release(Release request) {
			if (request.mode() == Release.Mode.LEAVE) {
				this.leaves.add(request.owner());
			}
			return request.waits() ? request.id().size() : -1;
		}

		@Override
		public int check(LockId id, String owner) {
			return id.size();
		}

		@Override
		public long remainingLease(String key) {
			return -1;
		}

		@Override
		public Duration commandTimeout() {
			return Duration.ofSeconds(1);
		}

		@Override
		public void prepare() {
			this.preparedListening.incrementAndGet();
		}

		@Override
		public CompletableFuture<?> listen(String key) {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public void await(CompletableFuture<?> listening) {
		}

		@Override
		public void unlisten(String key) {
		}

		@Override
		public void onRelease(Consumer<String> listener) {
		}

		@Override
		public boolean notifies() {
			return true;
		}

		@Override
		public void close() {
		}

	}

}
