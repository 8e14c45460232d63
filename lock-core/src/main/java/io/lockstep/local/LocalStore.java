package io.lockstep.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.local.LocalKey.Holder;
import org.jspecify.annotations.Nullable;

/**
 * Locks in this JVM's memory: the same owner checks, leases and max-hold caps as in
 * Redis, with {@code System.nanoTime()} as the clock. Fencing tokens come from one
 * counter, so they are strictly increasing for every key, across all modes. A key is held
 * exclusively, or shared by its readers or a semaphore's permit holders, each with its
 * own lease, cap and fencing token, by the rules of Redis ({@link LocalKey}). Releases
 * that free a key or a permit are told, in-process, to the listener given at construction
 * ({@link LocalWakeUps}). One monitor guards the map; operations never block on anything
 * else, and listeners run outside it.
 */
final class LocalStore implements LockStore {

	private final Map<String, LocalKey> keys = new HashMap<>();

	private long fence;

	private final Consumer<String> released;

	/**
	 * @param released told the key of every release that frees the key or a permit
	 */
	LocalStore(Consumer<String> released) {
		this.released = released;
	}

	/**
	 * {@inheritDoc}
	 * @throws io.lockstep.LockException when a key is held another way (a semaphore of
	 * another number of permits, a read lock for a semaphore, ...): nothing was acquired
	 */
	@Override
	public synchronized Attempt acquire(Acquire request) {
		LockId id = request.id();
		long now = System.nanoTime();
		long longest = -1;
		int first = -1;
		for (int i = 0; i < id.size(); i++) {
			LocalKey key = live(id.keys().get(i), now);
			if (key != null && !key.admits(id, request.owner())) {
				longest = Math.max(longest, key.firstEndMillis(now));
				first = (first < 0) ? i : first;
			}
		}
		if (first >= 0) {
			for (String name : request.waits() ? id.keys() : List.<String>of()) {
				// a waiting writer marks read-held keys: later readers wait behind it
				LocalKey key = this.keys.get(name);
				if (key != null) {
					key.waitedFor(id.sharing(), now + TimeUnit.MILLISECONDS.toNanos(request.entryMillis()));
				}
			}
			return Attempt.held(longest, first);
		}
		long maxHoldMillis = request.maxHoldMillis();
		long cap = (maxHoldMillis > 0) ? now + TimeUnit.MILLISECONDS.toNanos(maxHoldMillis) : Long.MAX_VALUE;
		long expiresAt = now + TimeUnit.MILLISECONDS.toNanos(request.leaseMillis());
		long[] fences = new long[id.size()];
		for (int i = 0; i < id.size(); i++) {
			LocalKey key = this.keys.computeIfAbsent(id.keys().get(i), (name) -> new LocalKey(id.sharing()));
			fences[i] = key.enter(request.owner(), () -> ++this.fence, expiresAt, cap,
					TimeUnit.MILLISECONDS.toNanos(request.delayMillis()));
		}
		return Attempt.acquired(fences);
	}

	/**
	 * Completed at once: the attempt never blocks on anything but the map's monitor (a
	 * refusal completes it exceptionally).
	 */
	@Override
	public CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		try {
			return CompletableFuture.completedFuture(acquire(request));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public synchronized CompletableFuture<long[]> renew(List<Renewal> renewals) {
		long now = System.nanoTime();
		long[] granted = new long[renewals.size()];
		for (int i = 0; i < granted.length; i++) {
			Renewal renewal = renewals.get(i);
			long least = Long.MAX_VALUE;
			for (String name : renewal.id().keys()) {
				LocalKey key = live(name, now);
				Holder holder = (key != null) ? key.holder(renewal.owner()) : null;
				if (key == null || holder == null) {
					least = 0;
					break;
				}
				long grant = Math.min(TimeUnit.MILLISECONDS.toNanos(renewal.leaseMillis()), holder.capAt() - now);
				if (grant <= 0) {
					least = -1;
					continue;
				}
				key.put(holder.until(now + grant));
				least = (least < 0) ? least : Math.min(least, TimeUnit.NANOSECONDS.toMillis(grant));
			}
			granted[i] = least;
		}
		return CompletableFuture.completedFuture(granted);
	}

	/**
	 * Every mode answers at once: the map never makes anyone wait. A release that frees a
	 * key, or a semaphore's permit, tells its listener (outside the monitor); a reader
	 * that leaves other readers behind does not (a writer waits for the last).
	 */
	@Override
	public int release(Release request) {
		if (request.mode() == Release.Mode.KEEP) {
			return keep(request.id(), request.owner(), request.keepMillis());
		}
		List<String> freed = new ArrayList<>(1);
		int released = 0;
		synchronized (this) {
			long now = System.nanoTime();
			for (String name : request.id().keys()) {
				LocalKey key = live(name, now);
				if (key != null && key.leave(request.owner())) {
					released++;
					if (key.isEmpty()) {
						this.keys.remove(name);
						freed.add(name);
					}
					else if (key.isSemaphore()) {
						freed.add(name);
					}
				}
			}
		}
		freed.forEach(this.released);
		return released;
	}

	private synchronized int keep(LockId id, String owner, long ttlMillis) {
		long now = System.nanoTime();
		int kept = 0;
		for (String name : id.keys()) {
			LocalKey key = live(name, now);
			Holder holder = (key != null) ? key.holder(owner) : null;
			if (key != null && holder != null) {
				long endsAt = Math.min(now + TimeUnit.MILLISECONDS.toNanos(ttlMillis), holder.capAt());
				// kept, then released: no lock delay after it
				key.put(new Holder(owner, holder.fence(), endsAt, endsAt, 0));
				kept++;
			}
		}
		return kept;
	}

	@Override
	public synchronized int check(LockId id, String owner) {
		long now = System.nanoTime();
		int held = 0;
		for (String name : id.keys()) {
			LocalKey key = live(name, now);
			if (key != null && key.holder(owner) != null) {
				held++;
			}
		}
		return held;
	}

	/** The remaining lease of the key's last holder. */
	@Override
	public synchronized long remainingLease(String name) {
		long now = System.nanoTime();
		LocalKey key = live(name, now);
		return (key != null) ? TimeUnit.NANOSECONDS.toMillis(key.lastEnd() - now) : -2;
	}

	/**
	 * The key unless every lease ended (then it is removed, and a writer's mark with it).
	 */
	private @Nullable LocalKey live(String name, long now) {
		LocalKey key = this.keys.get(name);
		if (key != null && key.expire(now)) {
			this.keys.remove(name);
			return null;
		}
		return key;
	}

	@Override
	public boolean shares() {
		return true;
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
		for (LocalKey key : this.keys.values()) {
			held += key.expire(now) ? 0 : 1;
		}
		this.keys.clear();
		return held;
	}

	@Override
	public synchronized void close() {
		this.keys.clear();
	}

}
