package io.lockstep.faults;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;

/**
 * What protects the work in a run: the lock and fencing tokens checked by the storage, or
 * one of the unprotected controls (the lock without fencing, or no lock at all), which
 * must show the anomaly the checkers look for.
 */
enum Protection {

	LOCK_AND_FENCING("lock + fencing", true, true), LOCK_ONLY("control: lock, no fencing", true, false),
	NO_LOCK("control: no lock", false, false);

	private static final AtomicLong unlockedTokens = new AtomicLong();

	private final String label;

	private final boolean locks;

	private final boolean fenced;

	Protection(String label, boolean locks, boolean fenced) {
		this.label = label;
		this.locks = locks;
		this.fenced = fenced;
	}

	String label() {
		return this.label;
	}

	/** Whether the storage checks fencing tokens. */
	boolean fenced() {
		return this.fenced;
	}

	boolean isControl() {
		return this != LOCK_AND_FENCING;
	}

	/**
	 * Takes the lock within {@code wait} (riding through {@link LockException}s as a
	 * caller with a retry would), or, without a lock, returns at once a holder that
	 * always believes it holds, with a token in call order.
	 */
	Held acquire(LockTemplate locks, String key, Duration wait) {
		if (!this.locks) {
			long token = unlockedTokens.incrementAndGet();
			return new Held() {

				private volatile boolean closed;

				@Override
				public long token() {
					return token;
				}

				@Override
				public boolean isHeld() {
					return !this.closed;
				}

				@Override
				public boolean close() {
					this.closed = true;
					return false;
				}

			};
		}
		long deadline = System.nanoTime() + wait.toNanos();
		while (true) {
			try {
				LockHandle handle = locks.withWaitTime(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))
					.acquire(key);
				return new Held() {

					@Override
					public long token() {
						return handle.fencingToken();
					}

					@Override
					public boolean isHeld() {
						return handle.isHeld();
					}

					@Override
					public boolean close() {
						try {
							handle.close();
							return false;
						}
						catch (LockLostException ex) {
							return true;
						}
					}

				};
			}
			catch (LockException ex) {
				if (System.nanoTime() - deadline >= 0) {
					throw ex;
				}
				sleep(50); // a retry backoff, not synchronisation
			}
		}
	}

	/**
	 * Models elapsed time: a retry's backoff, a paused holder's stall (not
	 * synchronisation).
	 */
	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/** A holder of the lock, or of nothing in the no-lock control. */
	interface Held {

		long token();

		boolean isHeld();

		/** Releases; returns whether the lease had been lost. */
		boolean close();

	}

}
