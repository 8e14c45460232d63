package io.lockstep.local;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import org.jspecify.annotations.Nullable;

/**
 * Locks in this JVM's memory: the same owner checks, leases and max-hold caps as in
 * Redis, with {@code System.nanoTime()} as the clock. Fencing tokens come from one
 * counter, so they are strictly increasing for every key. Releases are told, in-process,
 * to the listener given at construction ({@link LocalWakeUps}). One monitor guards the
 * map; operations never block on anything else, and listeners run outside it.
 */
final class LocalStore implements LockStore {

	private final Map<String, Entry> keys = new HashMap<>();

	private long fence;

	private final Consumer<String> released;

	/**
	 * @param released told the key of every release
	 */
	LocalStore(Consumer<String> released) {
		this.released = released;
	}

	/** A held key. */
	private record Entry(String owner, long fence, long expiresAt, long capAt) {
	}

	@Override
	public synchronized Attempt acquire(Acquire request) {
		LockId id = request.id();
		String owner = request.owner();
		long leaseMillis = request.leaseMillis();
		long maxHoldMillis = request.maxHoldMillis();
		long now = System.nanoTime();
		long longest = -1;
		int first = -1;
		for (int i = 0; i < id.size(); i++) {
			Entry entry = live(id.keys().get(i), now);
			if (entry != null && !entry.owner().equals(owner)) {
				longest = Math.max(longest, TimeUnit.NANOSECONDS.toMillis(entry.expiresAt() - now));
				first = (first < 0) ? i : first;
			}
		}
		if (first >= 0) {
			return Attempt.held(longest, first);
		}
		long cap = (maxHoldMillis > 0) ? now + TimeUnit.MILLISECONDS.toNanos(maxHoldMillis) : Long.MAX_VALUE;
		long[] fences = new long[id.size()];
		for (int i = 0; i < id.size(); i++) {
			String key = id.keys().get(i);
			Entry entry = live(key, now);
			fences[i] = (entry != null) ? entry.fence() : ++this.fence;
			long entryCap = (entry != null) ? entry.capAt() : cap;
			long expiresAt = Math.min(now + TimeUnit.MILLISECONDS.toNanos(leaseMillis), entryCap);
			this.keys.put(key, new Entry(owner, fences[i], expiresAt, entryCap));
		}
		return Attempt.acquired(fences);
	}

	/** Completed at once: the attempt never blocks on anything but the map's monitor. */
	@Override
	public CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		return CompletableFuture.completedFuture(acquire(request));
	}

	@Override
	public synchronized CompletableFuture<long[]> renew(List<Renewal> renewals) {
		long now = System.nanoTime();
		long[] granted = new long[renewals.size()];
		for (int i = 0; i < granted.length; i++) {
			Renewal renewal = renewals.get(i);
			long least = Long.MAX_VALUE;
			for (String key : renewal.id().keys()) {
				Entry entry = live(key, now);
				if (entry == null || !entry.owner().equals(renewal.owner())) {
					least = 0;
					break;
				}
				long grant = Math.min(TimeUnit.MILLISECONDS.toNanos(renewal.leaseMillis()), entry.capAt() - now);
				if (grant <= 0) {
					least = -1;
					continue;
				}
				this.keys.put(key, new Entry(entry.owner(), entry.fence(), now + grant, entry.capAt()));
				least = (least < 0) ? least : Math.min(least, TimeUnit.NANOSECONDS.toMillis(grant));
			}
			granted[i] = least;
		}
		return CompletableFuture.completedFuture(granted);
	}

	/** Every mode answers at once: the map never makes anyone wait. */
	@Override
	public int release(Release request) {
		if (request.mode() == Release.Mode.KEEP) {
			return keep(request.id(), request.owner(), request.keepMillis());
		}
		LockId id = request.id();
		String owner = request.owner();
		int released = 0;
		synchronized (this) {
			long now = System.nanoTime();
			for (String key : id.keys()) {
				Entry entry = live(key, now);
				if (entry != null && entry.owner().equals(owner)) {
					this.keys.remove(key);
					released++;
				}
			}
		}
		if (released > 0) {
			id.keys().forEach(this.released);
		}
		return released;
	}

	private synchronized int keep(LockId id, String owner, long ttlMillis) {
		long now = System.nanoTime();
		int kept = 0;
		for (String key : id.keys()) {
			Entry entry = live(key, now);
			if (entry != null && entry.owner().equals(owner)) {
				long endsAt = Math.min(now + TimeUnit.MILLISECONDS.toNanos(ttlMillis), entry.capAt());
				this.keys.put(key, new Entry(entry.owner(), entry.fence(), endsAt, endsAt));
				kept++;
			}
		}
		return kept;
	}

	@Override
	public synchronized int check(LockId id, String owner) {
		long now = System.nanoTime();
		int held = 0;
		for (String key : id.keys()) {
			Entry entry = live(key, now);
			if (entry != null && entry.owner().equals(owner)) {
				held++;
			}
		}
		return held;
	}

	@Override
	public synchronized long remainingLease(String key) {
		long now = System.nanoTime();
		Entry entry = live(key, now);
		return (entry != null) ? TimeUnit.NANOSECONDS.toMillis(entry.expiresAt() - now) : -2;
	}

	/** The entry of a key unless it expired (then it is removed). */
	private @Nullable Entry live(String key, long now) {
		Entry entry = this.keys.get(key);
		if (entry != null && now - entry.expiresAt() >= 0) {
			this.keys.remove(key);
			return null;
		}
		return entry;
	}

	@Override
	public boolean isDistributed() {
		return false;
	}

	@Override
	public Duration commandTimeout() {
		return Duration.ofSeconds(1);
	}

	/**
	 * Removes every key; the fence counter stays.
	 * @return how many keys were held (not expired)
	 */
	synchronized int clear() {
		long now = System.nanoTime();
		int held = 0;
		for (Entry entry : this.keys.values()) {
			held += (now - entry.expiresAt() < 0) ? 1 : 0;
		}
		this.keys.clear();
		return held;
	}

	@Override
	public synchronized void close() {
		this.keys.clear();
	}

}
