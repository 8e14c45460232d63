package io.lockstep.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key's asking gate under concurrent callers of both drivers: while the first
 * caller's attempt is on its way, every other local caller of the key joins the local
 * queue instead of asking, and only the queue's head asks besides the first caller, so
 * that at most two attempts of the key are on their way at any time (the gate's holder
 * and the head), not one per caller. Over a fake store whose first attempt takes the key
 * and replies only once the others have queued (pure logic, real threads).
 */
class AskingGateConcurrencyTests {

	private static final int CALLERS = 8;

	@Test
	void whileTheFirstCallerAsksTheOthersQueueAndOnlyTheHeadAsksBesideIt() throws Exception {
		FakeBackend backend = new FakeBackend();
		ExecutorService threads = Executors.newFixedThreadPool(CALLERS + 1);
		try (LockEngine engine = new LockEngine(new Storage(backend, backend), EngineOptions.defaults("p:"))) {
			CompletableFuture<Void> first = CompletableFuture.runAsync(() -> engine.acquire(request()).close(),
					threads);
			assertThat(backend.firstSent.await(5, TimeUnit.SECONDS)).as("the first attempt on its way").isTrue();
			CyclicBarrier together = new CyclicBarrier(CALLERS);
			List<CompletableFuture<?>> others = new ArrayList<>();
			for (int i = 0; i < CALLERS; i++) {
				boolean async = i % 2 == 0;
				others.add(CompletableFuture.runAsync(() -> {
					await(together);
					if (async) {
						engine.acquireAsync(request()).thenAccept(LeaseHandle::close).join();
					}
					else {
						engine.acquire(request()).close();
					}
				}, threads));
			}
			long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
			while (engine.waitersOf("k") < CALLERS && System.nanoTime() < until) {
				java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			assertThat(engine.waitersOf("k"))
				.as("callers queued while the first asks (attempts %d; threads: %s)", backend.attempts.get(), dump())
				.isEqualTo(CALLERS);
			assertThat(backend.maxInFlight.get())
				.as("attempts on their way at once while the first's is (it and the local queue's head)")
				.isLessThanOrEqualTo(2);
			assertThat(backend.askedMeanwhile)
				.as("callers that asked while the first's attempt was on its way (it and the local head)")
				.hasSizeLessThanOrEqualTo(2);
			backend.releaseFirst.countDown();
			first.get(10, TimeUnit.SECONDS);
			CompletableFuture.allOf(others.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
			System.out.printf("%d callers (half async): %d attempts, at most %d on their way at once%n", CALLERS + 1,
					backend.attempts.get(), backend.maxInFlight.get());
			assertThat(backend.maxInFlight.get())
				.as("attempts of the key on their way at once (the gate's holder and the local head)")
				.isLessThanOrEqualTo(2);
			assertThat(backend.attempts.get()).as("attempts").isGreaterThanOrEqualTo(CALLERS + 1);
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static String dump() {
		StringBuilder out = new StringBuilder();
		Thread.getAllStackTraces().forEach((thread, stack) -> {
			if (thread.getName().startsWith("pool-")) {
				out.append("\n").append(thread.getName()).append(": ");
				for (int i = 0; i < Math.min(8, stack.length); i++) {
					out.append(stack[i]).append(" < ");
				}
			}
		});
		return out.toString();
	}

	private static void await(CyclicBarrier barrier) {
		try {
			barrier.await(5, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static LockRequest request() {
		return new LockRequest(LockId.of("k"), "job", TimeUnit.SECONDS.toNanos(20),
				new HoldTerms(TimeUnit.SECONDS.toNanos(30), true, 0, 0), false);
	}

	/**
	 * A store that grants a free key and refuses a held one; its first attempt waits
	 * until released; every release wakes the key's local waiters.
	 */
	private static final class FakeBackend extends FakeStore {

		final AtomicInteger attempts = new AtomicInteger();

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger maxInFlight = new AtomicInteger();

		final CountDownLatch firstSent = new CountDownLatch(1);

		final CountDownLatch releaseFirst = new CountDownLatch(1);

		/** The owner tokens that asked while the first attempt was on its way. */
		final java.util.Set<String> askedMeanwhile = java.util.concurrent.ConcurrentHashMap.newKeySet();

		private volatile String holder;

		private volatile Consumer<String> released;

		@Override
		public Attempt acquire(Acquire request) {
			if (this.releaseFirst.getCount() > 0) {
				this.askedMeanwhile.add(request.owner());
			}
			int now = this.inFlight.incrementAndGet();
			this.maxInFlight.accumulateAndGet(now, Math::max);
			try {
				if (this.attempts.incrementAndGet() == 1) {
					// the first attempt takes the key on its way (the storage ran it; its
					// reply is slow)
					synchronized (this) {
						this.holder = request.owner();
					}
					this.firstSent.countDown();
					await(this.releaseFirst);
				}
				synchronized (this) {
					if (this.holder == null || this.holder.equals(request.owner())) {
						this.holder = request.owner();
						return Attempt.acquired(new long[] { this.attempts.get() });
					}
					return Attempt.held(30_000, 0, -1);
				}
			}
			finally {
				this.inFlight.decrementAndGet();
			}
		}

		private static void await(CountDownLatch latch) {
			try {
				latch.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		public CompletableFuture<Attempt> acquireAsync(Acquire request, java.util.concurrent.Executor blocking) {
			return CompletableFuture.supplyAsync(() -> acquire(request), blocking);
		}

		@Override
		public int release(Release request) {
			boolean freed;
			synchronized (this) {
				freed = request.owner().equals(this.holder);
				if (freed) {
					this.holder = null;
				}
			}
			return freed ? 1 : 0;
		}

		@Override
		public int check(LockId id, String owner) {
			return owner.equals(this.holder) ? 1 : 0;
		}

		@Override
		public void onRelease(Consumer<String> listener) {
			this.released = listener;
		}

	}

}
