package io.lockstep.internal.engine;

import io.lockstep.LockException;
import io.lockstep.LockMode;

/**
 * How an acquisition shares its key with others: exclusively (the plain lock, which is
 * the key's write lock), as one of its readers, or as one of {@code permits} holders of a
 * semaphore. Readers and permit holders each have their own owner token, lease and
 * fencing token.
 *
 * @param mode read or write
 * @param permits how many holders the key admits at once (write mode only; 1 for a plain
 * lock)
 */
public record Sharing(LockMode mode, int permits) {

	/** The plain lock. */
	public static final Sharing EXCLUSIVE = new Sharing(LockMode.WRITE, 1);

	/** A reader. */
	public static final Sharing READ = new Sharing(LockMode.READ, 1);

	/**
	 * @throws IllegalArgumentException if {@code permits < 1} or a read mode asks for
	 * more than one
	 */
	public Sharing {
		if (mode == null) {
			throw new IllegalArgumentException("'mode' must not be null");
		}
		if (permits < 1) {
			throw new IllegalArgumentException("'permits' must be at least 1 but was " + permits);
		}
		if (mode == LockMode.READ && permits > 1) {
			throw new IllegalArgumentException("A read lock cannot have permits (" + permits
					+ "): readers share the key with every other reader; use write mode for a semaphore");
		}
	}

	/** A semaphore of {@code permits} (or the plain lock for 1). */
	public static Sharing permits(int permits) {
		return (permits == 1) ? EXCLUSIVE : new Sharing(LockMode.WRITE, permits);
	}

	/** Whether it is the plain lock: one holder at a time. */
	public boolean exclusive() {
		return this.mode == LockMode.WRITE && this.permits == 1;
	}

	/** Whether it is a read lock. */
	public boolean read() {
		return this.mode == LockMode.READ;
	}

	/** For messages: "the write lock", "the read lock", "a semaphore of 3 permits". */
	public String describe() {
		if (read()) {
			return "the read lock";
		}
		return exclusive() ? "the write lock" : "a semaphore of " + this.permits + " permits";
	}

	/**
	 * The refusal of a caller that asked for a key held this way (by others) another way:
	 * naming both, with their numbers of permits.
	 * @param lock names the lock, e.g. {@code "Lock 'k'"}
	 */
	public LockException refuses(Sharing asked, String lock) {
		return new LockException(lock + " is held as " + counted() + ", and this call asked for " + asked.counted()
				+ ": every holder of a key must ask for it the same way (the same number of permits); nothing was "
				+ "acquired");
	}

	/** {@link #describe()}, naming the one permit of the write lock. */
	private String counted() {
		return exclusive() ? describe() + " (1 permit)" : describe();
	}

	/**
	 * A call that holds a key this way may enter it again the same way, or read inside a
	 * write; any other way would wait for itself (a read asking to write: an upgrade) or
	 * mix a key's kinds of lock.
	 * @throws LockException at once, naming both ways
	 */
	void checkReentry(Sharing asked, String key) {
		if (admits(asked)) {
			return;
		}
		if (read() && asked.exclusive()) {
			throw new LockException("This call holds the read lock of '" + key + "' and asked for its write lock: "
					+ "an upgrade would wait for itself (and deadlock with another reader that upgrades); release "
					+ "the read lock first, or take the write lock from the start");
		}
		throw new LockException("This call holds " + describe() + " of '" + key + "' and asked for " + asked.describe()
				+ " of it: every holder of a key must ask for it the same way");
	}

	/**
	 * Whether a call that holds the key this way may enter it again asking {@code asked}:
	 * the same way, or a read inside a write.
	 */
	public boolean admits(Sharing asked) {
		return equals(asked) || (exclusive() && asked.read());
	}

}
