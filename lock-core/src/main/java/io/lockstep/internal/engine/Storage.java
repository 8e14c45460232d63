package io.lockstep.internal.engine;

/**
 * A deployment's side of the seam: its store and its wake-up channel, closed together
 * (the channel first).
 *
 * @param store where the locks are
 * @param wakeUps how waiters hear of releases and hand-offs
 */
public record Storage(LockStore store, WakeUps wakeUps) implements AutoCloseable {

	@Override
	public void close() {
		try {
			this.wakeUps.close();
		}
		finally {
			this.store.close();
		}
	}

}
