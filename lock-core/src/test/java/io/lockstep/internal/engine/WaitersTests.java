package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local bookkeeping of {@link Waiters} that needs no storage: a hand-off told before
 * its waiter registered (a caller that queued with its first attempt registers after the
 * reply) is the waiter's once it registers, blocking or asynchronous, and only that
 * owner's.
 */
class WaitersTests {

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final Waiters waiters = new Waiters(new NoStorage(), this.scheduler);

	@AfterEach
	void close() {
		this.waiters.close();
		this.scheduler.shutdownNow();
	}

	@Test
	void aHandOffThatCameBeforeItsWaiterRegisteredIsTheWaitersOnceItRegisters() {
		this.waiters.handedOff("lockstep:job", "owner-1", 42, 30_000);
		Waiters.Waiter waiter = this.waiters.register("lockstep:job", "owner-1", true);
		assertThat(waiter.handOff()).isEqualTo(new Waiters.HandOff(42, 30_000));
		// claimed once: a later waiter with the same token (never issued twice) gets none
		this.waiters.unregister(waiter, true);
		assertThat(this.waiters.register("lockstep:job", "owner-1", true).handOff()).isNull();
	}

	@Test
	void anEarlyHandOffIsClaimedOnlyByItsOwnerForItsKey() {
		this.waiters.handedOff("lockstep:job", "owner-1", 42, 30_000);
		assertThat(this.waiters.register("lockstep:job", "owner-2", true).handOff()).isNull();
		assertThat(this.waiters.register("lockstep:other", "owner-1", true).handOff()).isNull();
		assertThat(this.waiters.register("lockstep:job", "owner-1", true).handOff()).isNotNull();
	}

	@Test
	void aHandOffThatCameBeforeAnAsynchronousWaiterRegisteredIsItsOwn() {
		this.waiters.handedOff("lockstep:job", "owner-1", 42, 30_000);
		Waiters.Wakeable nothing = new Waiters.Wakeable() {

			@Override
			public void signalled() {
			}

			@Override
			public void promoted() {
			}

		};
		assertThat(this.waiters.registerAsync("lockstep:job", "owner-2", true, nothing).waiter().handOff()).isNull();
		assertThat(this.waiters.registerAsync("lockstep:job", "owner-1", true, nothing).waiter().handOff())
			.isEqualTo(new Waiters.HandOff(42, 30_000));
	}

	@Test
	void aHandOffToARegisteredWaiterWakesIt() {
		Waiters.Waiter waiter = this.waiters.register("lockstep:job", "owner-1", true);
		this.waiters.handedOff("lockstep:job", "owner-1", 7, 1_000);
		assertThat(waiter.handOff()).isEqualTo(new Waiters.HandOff(7, 1_000));
	}

	/** A backend that stores nothing: the waiters only listen through it. */
	private static final class NoStorage implements LockBackend {

		@Override
		public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletableFuture<long[]> renew(List<Renewal> renewals) {
			throw new UnsupportedOperationException();
		}

		@Override
		public int release(LockId id, String owner) {
			throw new UnsupportedOperationException();
		}

		@Override
		public int keep(LockId id, String owner, long ttlMillis) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void releaseQuietly(LockId id, String owner) {
			throw new UnsupportedOperationException();
		}

		@Override
		public int check(LockId id, String owner) {
			throw new UnsupportedOperationException();
		}

		@Override
		public long remainingLease(String key) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Duration commandTimeout() {
			return Duration.ofSeconds(1);
		}

		@Override
		public void prepareListening() {
		}

		@Override
		public CompletableFuture<?> listen(String key) {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public void awaitListening(CompletableFuture<?> listening) {
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
