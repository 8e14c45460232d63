package io.lockstep.local;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.Sharing;
import org.jspecify.annotations.Nullable;

/**
 * What one key of the {@link LocalStore} holds: holders of one kind ({@link Sharing}),
 * either the one exclusive holder (the plain lock, which is the key's write lock), or its
 * readers, or at most {@code n} permit holders of a semaphore of {@code n}. Each holder
 * has its own owner token, fencing token, lease and max-hold cap, on the
 * {@code System.nanoTime()} clock. A writer that waits for a read-held key marks it until
 * its next attempt is due (each attempt renews the mark, as a queue entry in Redis is
 * renewed): readers that come after it wait behind it, and a writer that gave up or
 * vanished holds them up no longer than that. Not thread-safe: the store's monitor guards
 * it.
 */
final class LocalKey {

	private final Sharing sharing;

	private final List<Holder> holders = new ArrayList<>(2);

	/**
	 * Until when a writer waits for the readers ({@code System.nanoTime()}), unless it
	 * asks again first; {@code null} when none does.
	 */
	private @Nullable Long writerWaitsUntil;

	LocalKey(Sharing sharing) {
		this.sharing = sharing;
	}

	/**
	 * One holder of the key.
	 *
	 * @param owner its owner token
	 * @param fence its fencing token
	 * @param expiresAt when its lease ends ({@code System.nanoTime()})
	 * @param capAt its max-hold cap: no renewal extends the lease past it
	 * @param delayNanos its lock delay: after a lease that ended without a release, its
	 * share stays counted this long (the owner no longer holds it)
	 */
	record Holder(String owner, long fence, long expiresAt, long capAt, long delayNanos) {

		/** The same holder with its lease ending at {@code expiresAt}. */
		Holder until(long expiresAt) {
			return new Holder(this.owner, this.fence, expiresAt, this.capAt, this.delayNanos);
		}

		/** Whether its lease lasts (not ended, nor in its lock delay). */
		boolean lasts(long now) {
			return now - this.expiresAt < 0;
		}

		/** When it stops counting: its lease's end plus its lock delay. */
		long countsUntil() {
			return this.expiresAt + this.delayNanos;
		}

	}

	/**
	 * Drops the holders whose lease, and lock delay after it, ended.
	 * @return whether none is left: the key is free
	 */
	boolean expire(long now) {
		this.holders.removeIf((holder) -> now - holder.countsUntil() >= 0);
		return this.holders.isEmpty();
	}

	/**
	 * The holder with that owner token whose lease lasts, or {@code null} (also for one
	 * in its lock delay: it no longer holds the key).
	 */
	@Nullable Holder holder(String owner) {
		long now = System.nanoTime();
		for (Holder holder : this.holders) {
			if (holder.owner().equals(owner)) {
				return holder.lasts(now) ? holder : null;
			}
		}
		return null;
	}

	/**
	 * Whether the owner may hold the key asked as {@code id} says, now: it holds it
	 * already, or it joins the readers (unless a writer waits) or a semaphore with a free
	 * permit. A reader that finds a writer, a writer that finds readers and any holder
	 * that finds the key taken wait.
	 * @throws io.lockstep.LockException when the key is held another way (a semaphore of
	 * another number of permits, a read lock for a semaphore, ...)
	 */
	boolean admits(LockId id, String owner) {
		Sharing asked = id.sharing();
		if (!this.sharing.equals(asked)) {
			if ((this.sharing.read() && asked.exclusive()) || (this.sharing.exclusive() && asked.read())) {
				return false;
			}
			throw this.sharing.refuses(asked, "Lock '" + id.display() + "'");
		}
		if (holder(owner) != null) {
			return true;
		}
		if (this.sharing.read()) {
			return this.writerWaitsUntil == null || System.nanoTime() - this.writerWaitsUntil >= 0;
		}
		return this.holders.size() < this.sharing.permits();
	}

	/**
	 * A caller that asked {@code asked} waits for the key: a writer that waits for
	 * readers marks it until {@code until}, so that readers that come after it wait
	 * behind it.
	 */
	void waitedFor(Sharing asked, long until) {
		if (this.sharing.read() && asked.exclusive()) {
			this.writerWaitsUntil = until;
		}
	}

	/**
	 * The owner holds the key (once {@link #admits admitted}): a new holder gets a
	 * fencing token from {@code fences}; one that holds it already keeps its token and
	 * cap, its lease refreshed within the cap.
	 * @return its fencing token
	 */
	long enter(String owner, LongSupplier fences, long expiresAt, long capAt, long delayNanos) {
		Holder mine = holder(owner);
		if (mine != null) {
			put(mine.until(Math.min(expiresAt, mine.capAt())));
			return mine.fence();
		}
		long fence = fences.getAsLong();
		this.holders.add(new Holder(owner, fence, Math.min(expiresAt, capAt), capAt, delayNanos));
		return fence;
	}

	/** Replaces the holder with the same owner token. */
	void put(Holder holder) {
		this.holders.replaceAll((h) -> h.owner().equals(holder.owner()) ? holder : h);
	}

	/**
	 * The owner's hold ends (also in its lock delay: a release frees the key at once).
	 * @return whether it held the key (its lease lasted)
	 */
	boolean leave(String owner) {
		boolean held = holder(owner) != null;
		this.holders.removeIf((holder) -> holder.owner().equals(owner));
		return held;
	}

	boolean isEmpty() {
		return this.holders.isEmpty();
	}

	/** Whether a holder that leaves frees a permit that a waiter may take. */
	boolean isSemaphore() {
		return !this.sharing.exclusive() && !this.sharing.read();
	}

	/** The time until the first lease ends, in ms: a waiter's bound. */
	long firstEndMillis(long now) {
		long first = Long.MAX_VALUE;
		for (Holder holder : this.holders) {
			first = Math.min(first, holder.countsUntil() - now);
		}
		return TimeUnit.NANOSECONDS.toMillis(first);
	}

	/** When the last lease (and its lock delay) ends: the key is taken until then. */
	long lastEnd() {
		long last = this.holders.get(0).countsUntil();
		for (Holder holder : this.holders) {
			last = (holder.countsUntil() - last > 0) ? holder.countsUntil() : last;
		}
		return last;
	}

}
