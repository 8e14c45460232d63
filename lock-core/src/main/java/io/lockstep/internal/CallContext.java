package io.lockstep.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
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

		/**
		 * Confirms with Redis that the lock is still held; does nothing once it was
		 * released normally.
		 * @throws RuntimeException ({@code LockLostException}) when the lease was lost
		 */
		void verifyHeld();

		/** The reentrancy depth: 1 for an acquisition that nobody re-entered. */
		int depth();

		/**
		 * Unbinds the lock from the acquiring thread: the watchdog keeps renewing it
		 * after that thread ends or moves on, and a lost lease no longer interrupts it.
		 */
		void detach();

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

	/** The active entries of this thread, outermost first. */
	public static List<Entry> held() {
		Deque<Entry> entries = held.get();
		List<Entry> active = new ArrayList<>(entries.size());
		for (Entry entry : entries) {
			if (entry.isActive()) {
				active.add(entry);
			}
		}
		if (entries.isEmpty()) {
			held.remove();
		}
		return active;
	}

	/**
	 * Moves the lock acquired for the key off this thread, so that it can stay held past
	 * the call (an asynchronous result) without this thread re-entering it. Does nothing
	 * and returns {@code false} for a reentrant acquisition, which the thread's outer
	 * call still owns.
	 */
	public static boolean detach(String key) {
		Entry entry = null;
		for (Iterator<Entry> it = held.get().descendingIterator(); it.hasNext() && entry == null;) {
			Entry candidate = it.next();
			if (candidate.isActive() && candidate.key().equals(key)) {
				entry = candidate;
			}
		}
		if (entry == null || entry.depth() != 1) {
			return false;
		}
		entry.detach();
		remove(entry);
		return true;
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
