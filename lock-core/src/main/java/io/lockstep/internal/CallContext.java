package io.lockstep.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * The locks held by the current call (this thread), innermost last. Entries whose lock
 * was released elsewhere (another thread closed the handle) are skipped and dropped.
 */
public final class CallContext {

	private static final ThreadLocal<Deque<Entry>> held = ThreadLocal.withInitial(ArrayDeque::new);

	private CallContext() {
	}

	/** A lock held by a call. */
	public interface Entry {

		String key();

		long fencingToken();

		boolean isActive();

		/** The client that acquired it; reentrancy never crosses clients. */
		Object owner();

	}

	public static void push(Entry entry) {
		held.get().addLast(entry);
	}

	public static void remove(Entry entry) {
		Deque<Entry> entries = held.get();
		entries.removeLastOccurrence(entry);
		if (entries.isEmpty()) {
			held.remove();
		}
	}

	/**
	 * The innermost active entry for the key of the given owner on this thread, or
	 * {@code null}.
	 */
	public static Entry find(String key, Object owner) {
		Deque<Entry> entries = held.get();
		for (Iterator<Entry> it = entries.descendingIterator(); it.hasNext();) {
			Entry entry = it.next();
			if (!entry.isActive()) {
				it.remove();
			}
			else if (entry.key().equals(key) && entry.owner() == owner) {
				return entry;
			}
		}
		if (entries.isEmpty()) {
			held.remove();
		}
		return null;
	}

	public static OptionalLong currentFencingToken() {
		Deque<Entry> entries = held.get();
		for (Iterator<Entry> it = entries.descendingIterator(); it.hasNext();) {
			Entry entry = it.next();
			if (entry.isActive()) {
				return OptionalLong.of(entry.fencingToken());
			}
		}
		held.remove();
		return OptionalLong.empty();
	}

}
