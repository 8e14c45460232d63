package io.lockstep.internal.engine;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Hand-offs to owner tokens no local waiter asks with (yet): a caller that queued with
 * its first attempt registers after the reply, and the hand-off may come first. Kept by
 * arrival, oldest first, a while and up to a bound. Owned by {@link Waiters}, used under
 * its monitor only.
 */
final class UnclaimedHandOffs {

	/**
	 * How long a hand-off waits for its waiter to register: far longer than the gap
	 * between an attempt's reply and the registration. A caller that never registers (it
	 * gave up, or got the lock by another attempt) left the queue and released what was
	 * handed to it ({@link LockStore.Release#leave}).
	 */
	private static final long UNCLAIMED_NANOS = TimeUnit.SECONDS.toNanos(30);

	/** At most this many unclaimed hand-offs are kept; the oldest go first. */
	private static final int MAX_UNCLAIMED = 4096;

	private final Map<String, HandOff> byOwner = new LinkedHashMap<>();

	/** A hand-off that found no waiter, and when it came. */
	record HandOff(String key, long fencingToken, long leaseMillis, long receivedNanos) {
	}

	/** Keeps a hand-off for a waiter that registers later; forgets the stale ones. */
	void keep(String key, String owner, long fencingToken, long leaseMillis) {
		long now = System.nanoTime();
		Iterator<HandOff> oldest = this.byOwner.values().iterator();
		while (oldest.hasNext()) {
			HandOff next = oldest.next();
			if (this.byOwner.size() < MAX_UNCLAIMED && now - next.receivedNanos() < UNCLAIMED_NANOS) {
				break;
			}
			oldest.remove();
		}
		this.byOwner.put(owner, new HandOff(key, fencingToken, leaseMillis, now));
	}

	/** The hand-off of the key to the owner, taken, or {@code null}. */
	HandOff claim(String key, String owner) {
		HandOff handOff = this.byOwner.get(owner);
		if (handOff == null || !handOff.key().equals(key)) {
			return null;
		}
		this.byOwner.remove(owner);
		return handOff;
	}

	void clear() {
		this.byOwner.clear();
	}

}
