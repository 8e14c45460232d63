package io.lockstep.internal.engine;

import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lockstep.LockException;
import io.lockstep.internal.DurationFormat;

/**
 * Extends held leases on request ({@link io.lockstep.LockHandle#extend}) through the
 * storage's token-checked renewal, applying each reply on the {@link Watchdog}'s thread,
 * the one writer of a lease's renewal state.
 */
final class Extensions {

	private final LockStore store;

	private final Watchdog watchdog;

	Extensions(LockStore store, Watchdog watchdog) {
		this.store = store;
		this.watchdog = watchdog;
	}

	/**
	 * Sets every lease to end {@code leaseNanos} from now, never past its max-hold cap,
	 * with the storage's token-checked renewal; the replies are applied on the watchdog's
	 * thread, like its own. A fixed lease stays fixed; a renewed one goes on being
	 * renewed, never ending before the extension. Blocks the caller for one round trip,
	 * bounded by the command timeout.
	 * @return whether every lease is still held: {@code false} when one is not
	 * {@code HELD}, or the storage found a key gone or held by another owner (the lease
	 * is then lost)
	 * @throws LockException if the storage did not answer in time or failed
	 */
	boolean extend(List<Lease> leases, long leaseNanos) {
		if (leases.stream().anyMatch((lease) -> lease.state() != Lease.State.HELD)) {
			return false;
		}
		long sentNanos = System.nanoTime();
		long leaseMillis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(leaseNanos));
		List<LockStore.Renewal> renewals = leases.stream()
			.map((lease) -> new LockStore.Renewal(lease.id(), lease.owner(), leaseMillis))
			.toList();
		CompletableFuture<Boolean> applied = this.store.renew(renewals)
			.orTimeout(this.store.commandTimeout().toNanos(), TimeUnit.NANOSECONDS)
			.handleAsync((granted, failure) -> {
				if (failure != null) {
					// it may have run: a shorter lease may end the keys earlier than the
					// local deadline says
					mayHaveShortened(leases, sentNanos, leaseNanos);
					throw (failure instanceof CompletionException completion) ? completion
							: new CompletionException(failure);
				}
				return extended(leases, granted, sentNanos, leaseMillis);
			}, this.watchdog.executor());
		String what = "Extending the lease of '" + leases.get(0).id().display() + "' failed: ";
		try {
			// bounded: a reply dropped with the watchdog's queue (the client closing)
			// must not block the caller for ever
			return applied.get(2 * this.store.commandTimeout().toNanos() + TimeUnit.SECONDS.toNanos(1),
					TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockException(what + "interrupted", ex);
		}
		catch (TimeoutException ex) {
			throw new LockException(what + "its reply was not applied (the lock client is closing)", ex);
		}
		catch (ExecutionException | CancellationException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			while (cause instanceof CompletionException && cause.getCause() != null) {
				cause = cause.getCause();
			}
			if (cause instanceof LockException failure) {
				throw failure;
			}
			if (cause instanceof TimeoutException) {
				throw new LockException(what + "no answer within " + DurationFormat.format(this.store.commandTimeout()),
						cause);
			}
			throw new LockException(what + cause, cause);
		}
	}

	/**
	 * An extension that got no answer may have run in the storage: the keys then end
	 * {@code leaseNanos} after it was sent, which is earlier than the local deadline when
	 * it shortened the lease; the local deadline moves there.
	 */
	private void mayHaveShortened(List<Lease> leases, long sentNanos, long leaseNanos) {
		long deadline = sentNanos + leaseNanos - this.store.driftNanos(leaseNanos);
		for (Lease lease : leases) {
			lease.renewal().mayEndBy(deadline);
		}
	}

	private boolean extended(List<Lease> leases, long[] granted, long sentNanos, long leaseMillis) {
		boolean held = true;
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			if (granted[i] > 0 && lease.state() == Lease.State.HELD) {
				lease.renewal()
					.extended(sentNanos, TimeUnit.MILLISECONDS.toNanos(granted[i]), granted[i] < leaseMillis);
				// a shorter lease falls due (or runs out) before the pass planned for it
				this.watchdog.wake(lease);
			}
			else if (granted[i] < 0) {
				lease.renewal().cappedNow();
			}
			else if (granted[i] == 0) {
				lease.lose("extending the lease found a key of the lock gone or held by another owner");
			}
			held = held && lease.isHeld();
		}
		return held;
	}

}
