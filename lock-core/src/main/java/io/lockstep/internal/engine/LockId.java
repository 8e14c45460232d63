package io.lockstep.internal.engine;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

import org.springframework.util.Assert;

/**
 * The identity of a lock: the sorted set of its full Redis keys. Two acquisitions are of
 * the same lock exactly when their key sets are equal; no joined string stands in for it.
 */
public final class LockId {

	private final List<String> keys;

	private LockId(List<String> keys) {
		this.keys = keys;
	}

	/** The lock of one key. */
	public static LockId of(String key) {
		Assert.notNull(key, "'key' must not be null");
		return new LockId(List.of(key));
	}

	/** The lock of the distinct keys, in sorted order. */
	public static LockId of(Collection<String> keys) {
		Assert.notEmpty(keys, "'keys' must not be empty");
		keys.forEach((key) -> Assert.notNull(key, "'keys' must not contain null"));
		return new LockId(List.copyOf(new TreeSet<>(keys)));
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
		return (other instanceof LockId that) && this.keys.equals(that.keys);
	}

	@Override
	public int hashCode() {
		return this.keys.hashCode();
	}

	@Override
	public String toString() {
		return this.keys.toString();
	}

}
