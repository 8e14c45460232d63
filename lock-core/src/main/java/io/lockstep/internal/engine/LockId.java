package io.lockstep.internal.engine;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

import org.springframework.util.Assert;

/**
 * The identity of a lock: the sorted set of its full Redis keys, and how it shares them
 * ({@link Sharing}: exclusively, as a reader, or as a semaphore's permit holder). Two
 * acquisitions are of the same lock exactly when their key sets and sharing are equal; no
 * joined string stands in for it.
 */
public final class LockId {

	private final List<String> keys;

	private final Sharing sharing;

	private LockId(List<String> keys, Sharing sharing) {
		this.keys = keys;
		this.sharing = sharing;
	}

	/** The plain lock of one key. */
	public static LockId of(String key) {
		return of(key, Sharing.EXCLUSIVE);
	}

	/** The lock of one key, shared as {@code sharing} says. */
	public static LockId of(String key, Sharing sharing) {
		Assert.notNull(key, "'key' must not be null");
		Assert.notNull(sharing, "'sharing' must not be null");
		return new LockId(List.of(key), sharing);
	}

	/** The plain lock of the distinct keys, in sorted order. */
	public static LockId of(Collection<String> keys) {
		Assert.notEmpty(keys, "'keys' must not be empty");
		keys.forEach((key) -> Assert.notNull(key, "'keys' must not contain null"));
		return new LockId(List.copyOf(new TreeSet<>(keys)), Sharing.EXCLUSIVE);
	}

	/** The lock of some of these keys, shared the same way. */
	public LockId withKeys(Collection<String> keys) {
		LockId plain = of(keys);
		return new LockId(plain.keys, this.sharing);
	}

	/** How the lock shares its keys. */
	public Sharing sharing() {
		return this.sharing;
	}

	/** The full Redis keys, sorted and distinct. */
	public List<String> keys() {
		return this.keys;
	}

	public int size() {
		return this.keys.size();
	}

	/** The first key in sorted order. */
	public String first() {
		return this.keys.get(0);
	}

	/** The key, or the keys joined by {@code ","}: for messages and display only. */
	public String display() {
		return (this.keys.size() == 1) ? this.keys.get(0) : String.join(",", this.keys);
	}

	@Override
	public boolean equals(Object other) {
		return (other instanceof LockId that) && this.keys.equals(that.keys) && this.sharing.equals(that.sharing);
	}

	@Override
	public int hashCode() {
		return this.keys.hashCode() * 31 + this.sharing.hashCode();
	}

	@Override
	public String toString() {
		return this.keys.toString();
	}

}
