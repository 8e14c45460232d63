package io.lockstep.internal.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.lockstep.observation.LockObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A failure while an acquisition ends: of user code (an observation handler) after a
 * grant, or an Error of the storage client while the ending's undo is sent. The grant
 * must not be leaked, whichever driver ran it: either the caller gets a handle, or the
 * keys are given back (an undo or a release under the grant's owner token) and no lease
 * stays registered (renewed by the watchdog with no handle to release it); and an ended
 * acquisition leaves no waiter in the key's local queue. Over a fake store that grants
 * (or refuses) at once and records what is given back (pure logic).
 */
class AcquisitionEndingFailureTests {

	private final FakeBackend backend = new FakeBackend();

	/**
	 * An Error (not a RuntimeException) from a handler when the acquire observation
	 * stops, after the grant became a lease: the blocking caller gets the Error, and the
	 * lease must not stay registered without a handle.
	 */
	@Test
	void anErrorFromAnAcquireHandlerAtItsStopLeavesNoLeaseBehindOnTheBlockingPath() {
		ObservationRegistry registry = throwing(LockObservationContext.Kind.ACQUIRE, false,
				() -> new AssertionError("handler failed"));
		try (LockEngine engine = engine(registry)) {
			Throwable thrown = acquireCaught(engine);
			assertThat(engine.registered())
				.as("leases left registered (held, renewed, no handle) after the caller got %s", thrown)
				.isZero();
		}
	}

	/** The same on the asynchronous path: the future fails, the lease must not stay. */
	@Test
	void anErrorFromAnAcquireHandlerAtItsStopLeavesNoLeaseBehindOnTheAsyncPath() throws Exception {
		ObservationRegistry registry = throwing(LockObservationContext.Kind.ACQUIRE, false,
				() -> new AssertionError("handler failed"));
		try (LockEngine engine = engine(registry)) {
			Throwable thrown = acquireAsyncCaught(engine);
			assertThat(engine.registered())
				.as("leases left registered (held, renewed, no handle) after the caller got %s", thrown)
				.isZero();
		}
	}

	/**
	 * A RuntimeException from a handler when the held observation starts (inside
	 * {@code LeaseRegistry.granted}, before the lease exists): the blocking caller gets
	 * the exception; the key the storage granted must be given back, not left held for
	 * its whole lease by nobody.
	 */
	@Test
	void aHeldHandlerThatThrowsAtItsStartGivesTheGrantBackOnTheBlockingPath() throws Exception {
		ObservationRegistry registry = throwing(LockObservationContext.Kind.HELD, true,
				() -> new IllegalStateException("handler failed"));
		try (LockEngine engine = engine(registry)) {
			Throwable thrown = acquireCaught(engine);
			assertThat(thrown).as("the caller is told").isNotNull();
			assertGrantGivenBack(thrown);
		}
	}

	/** The same on the asynchronous path. */
	@Test
	void aHeldHandlerThatThrowsAtItsStartGivesTheGrantBackOnTheAsyncPath() throws Exception {
		ObservationRegistry registry = throwing(LockObservationContext.Kind.HELD, true,
				() -> new IllegalStateException("handler failed"));
		try (LockEngine engine = engine(registry)) {
			Throwable thrown = acquireAsyncCaught(engine);
			assertGrantGivenBack(thrown);
		}
	}

	/**
	 * An Error while the effects of the ending are done (here the undo of a failed
	 * attempt, from the storage client) after the machine ended: the blocking caller gets
	 * the Error, and its waiter must not stay in the key's local queue (a dead head that
	 * never asks holds up every later local caller of the key).
	 */
	@Test
	void anErrorWhileTheUndoOfAFailedAttemptIsSentLeavesNoLocalWaiterOnTheBlockingPath() {
		this.backend.failAttempts = true;
		this.backend.releaseError = new AssertionError("release blew up");
		try (LockEngine engine = engine(ObservationRegistry.NOOP)) {
			// another local caller asks for the key: this one joins the local queue first
			assertThat(engine.waiters().beginAsking("k")).isTrue();
			Throwable thrown = acquireCaught(engine);
			assertThat(thrown).as("the caller is told").isNotNull();
			assertThat(engine.waitersOf("k")).as("local waiters left after the caller got %s", thrown).isZero();
		}
	}

	/** The same on the asynchronous path. */
	@Test
	void anErrorWhileTheUndoOfAFailedAttemptIsSentLeavesNoLocalWaiterOnTheAsyncPath() throws Exception {
		this.backend.failAttempts = true;
		this.backend.releaseError = new AssertionError("release blew up");
		try (LockEngine engine = engine(ObservationRegistry.NOOP)) {
			assertThat(engine.waiters().beginAsking("k")).isTrue();
			Throwable thrown = acquireAsyncCaught(engine);
			assertThat(engine.waitersOf("k")).as("local waiters left after the caller got %s", thrown).isZero();
		}
	}

	/**
	 * The async twin of
	 * {@code AcquisitionDriverTests.aFailureAfterTheGateWasTakenEndsTheGate}: the first
	 * caller took the key's asking gate, then asking whether its client hears hand-offs
	 * failed. The failure must reach the caller through the future (or at least end the
	 * acquisition), and the gate must end with it, so that the key's next uncontended
	 * caller asks at once instead of registering first.
	 */
	@Test
	void aFailureAfterTheGateWasTakenEndsTheGateOnTheAsyncPath() throws Exception {
		this.backend.handsOff = true;
		this.backend.hearsFailure = new IllegalStateException("channel broke");
		try (LockEngine engine = engine(ObservationRegistry.NOOP)) {
			Throwable thrown = catchThrowable(() -> engine.acquireAsync(request("k")).get(5, TimeUnit.SECONDS));
			assertThat(thrown).as("the caller is told").isNotNull();
			engine.acquire(request("k")).close();
			assertThat(this.backend.prepared.get())
				.as("registrations of the next uncontended caller (the first got %s; gate still taken: %s)", thrown,
						!engine.waiters().beginAsking("k"))
				.isZero();
		}
	}

	private LockEngine engine(ObservationRegistry registry) {
		return new LockEngine(new Storage(this.backend, this.backend),
				EngineOptions.defaults("p:").withObservations(new LockObservations(registry, null)));
	}

	/** Acquires "k" on the blocking path; what the caller got, or null. */
	private static Throwable acquireCaught(LockEngine engine) {
		return catchThrowable(() -> closeIfAny(engine.acquire(request("k"))));
	}

	/** Acquires "k" on the asynchronous path, waiting up to 5 s; what the caller got. */
	private static Throwable acquireAsyncCaught(LockEngine engine) {
		CompletableFuture<LeaseHandle> acquiring = engine.acquireAsync(request("k"));
		Throwable thrown = catchThrowable(() -> closeIfAny(acquiring.get(5, TimeUnit.SECONDS)));
		assertThat(acquiring.isDone()).as("the future completed within 5 s").isTrue();
		return thrown;
	}

	/** The key the storage granted was given back under the grant's owner token. */
	private void assertGrantGivenBack(Throwable thrown) throws InterruptedException {
		assertThat(this.backend.gaveBack.await(2, TimeUnit.SECONDS)).as("something given back within 2 s").isTrue();
		assertThat(this.backend.givenBack)
			.as("releases or undos under the grant's owner token %s (the caller got %s)", this.backend.lastOwner,
					thrown)
			.contains(this.backend.lastOwner);
	}

	private static void closeIfAny(LeaseHandle handle) {
		if (handle != null) {
			handle.close();
		}
	}

	/**
	 * A registry whose handler throws at the start or stop of one kind of observation.
	 */
	private static ObservationRegistry throwing(LockObservationContext.Kind kind, boolean atStart,
			Supplier<? extends Throwable> failure) {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler(new ObservationHandler<>() {

			@Override
			public void onStart(Observation.Context context) {
				if (atStart) {
					fail(context);
				}
			}

			@Override
			public void onStop(Observation.Context context) {
				if (!atStart) {
					fail(context);
				}
			}

			private void fail(Observation.Context context) {
				if (context instanceof LockObservationContext lock && lock.getKind() == kind) {
					Throwable thrown = failure.get();
					if (thrown instanceof Error error) {
						throw error;
					}
					throw (RuntimeException) thrown;
				}
			}

			@Override
			public boolean supportsContext(Observation.Context context) {
				return true;
			}

		});
		return registry;
	}

	/** A request of lock "job" with a 30 s renewed lease and a 5 s wait. */
	private static LockRequest request(String key) {
		return new LockRequest(LockId.of(key), "job", TimeUnit.SECONDS.toNanos(5),
				new HoldTerms(TimeUnit.SECONDS.toNanos(30), true, 0, 0), false);
	}

	/** A store that grants every attempt at once, and records what is given back. */
	private static final class FakeBackend extends FakeStore {

		final List<String> givenBack = new CopyOnWriteArrayList<>();

		final CountDownLatch gaveBack = new CountDownLatch(1);

		volatile String lastOwner;

		/** Whether every attempt fails (the storage refuses it). */
		volatile boolean failAttempts;

		/** Thrown by every release, when set. */
		volatile Error releaseError;

		FakeBackend() {
			this.hears = true;
		}

		@Override
		public Attempt acquire(Acquire request) {
			this.lastOwner = request.owner();
			if (this.failAttempts) {
				throw new io.lockstep.LockException("Redis failed to acquire 'k': NOPERM");
			}
			return Attempt.acquired(new long[] { 1 });
		}

		@Override
		public CompletableFuture<Attempt> acquireAsync(Acquire request, java.util.concurrent.Executor blocking) {
			try {
				return CompletableFuture.completedFuture(acquire(request));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}

		@Override
		public int release(Release request) {
			this.givenBack.add(request.owner());
			this.gaveBack.countDown();
			if (this.releaseError != null) {
				throw this.releaseError;
			}
			return super.release(request);
		}

	}

}
