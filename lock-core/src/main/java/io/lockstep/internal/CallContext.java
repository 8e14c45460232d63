package io.lockstep.internal;

import java.lang.ref.WeakReference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;

/**
 * The locks held by the current call on this thread, innermost last. An entry stays only
 * while its call runs: it is removed when its handle is closed on this thread or when the
 * call hands the lock over to asynchronous work ({@link #remove}); entries closed
 * elsewhere (another thread closed the handle) are skipped and dropped. Entries are
 * weakly referenced, so a handle dropped without {@code close()} can still be detected as
 * leaked. The thread-local is cleared whenever it becomes empty.
 */
public final class CallContext {

	private static final ThreadLocal<Deque<WeakReference<Entry>>> held = new ThreadLocal<>();

	private CallContext() {
	}

	/** A lock held by a call. */
	public interface Entry {

		/** The full keys this entry holds. */
		List<String> keys();

		/** The key prefix of the engine that acquired it. */
		String keyPrefix();

		long fencingToken();

		/** Whether the call still runs holding the lock. */
		boolean isActive();

		/**
		 * The scope of its reentrancy: the engine that acquired it; reentrancy never
		 * crosses engines.
		 */
		Object scope();

		/**
		 * Confirms with the storage that the lock is still held; does nothing once it was
		 * released normally.
		 * @throws RuntimeException ({@code LockLostException}) when the lease was lost
		 */
		void verifyHeld();

		/**
		 * Confirms the lock before the transaction the call runs in commits, like
		 * {@link #verifyHeld()}; a check the storage did not answer is counted and named
		 * ("could not confirm the lock before commit").
		 * @throws RuntimeException ({@code LockLostException}) when the lease was lost,
		 * ({@code LockException}) when it could not be confirmed
		 */
		void verifyBeforeCommit();

		/** Whether a lost lease interrupted this call's thread. */
		boolean interruptedByLoss();

		/**
		 * Ends the call on this thread while the lock stays held (asynchronous work holds
		 * it now): this thread no longer re-enters it and is no longer interrupted for
		 * it.
		 */
		void endCall();

	}

	public static void push(Entry entry) {
		Deque<WeakReference<Entry>> entries = held.get();
		if (entries == null) {
			entries = new ArrayDeque<>();
			held.set(entries);
		}
		entries.addLast(new WeakReference<>(entry));
	}

	/** Removes the entry from this thread's context, if it is there. */
	public static void remove(Entry entry) {
		Deque<WeakReference<Entry>> entries = held.get();
		if (entries == null) {
			return;
		}
		for (Iterator<WeakReference<Entry>> it = entries.descendingIterator(); it.hasNext();) {
			Entry candidate = it.next().get();
			if (candidate == null || candidate == entry) {
				it.remove();
			}
		}
		clearIfEmpty(entries);
	}

	/** The active entries of this thread, outermost first. */
	public static List<Entry> held() {
		Deque<WeakReference<Entry>> entries = held.get();
		if (entries == null) {
			return List.of();
		}
		List<Entry> active = new ArrayList<>(entries.size());
		for (Iterator<WeakReference<Entry>> it = entries.iterator(); it.hasNext();) {
			Entry entry = it.next().get();
			if (entry == null || !entry.isActive()) {
				it.remove();
			}
			else {
				active.add(entry);
			}
		}
		clearIfEmpty(entries);
		return active;
	}

	/** The active entries of one engine on this thread, outermost first. */
	public static List<Entry> held(Object scope) {
		List<Entry> all = held();
		if (all.isEmpty()) {
			return all;
		}
		List<Entry> mine = new ArrayList<>(all.size());
		for (Entry entry : all) {
			if (entry.scope() == scope) {
				mine.add(entry);
			}
		}
		return mine;
	}

	/** Whether another active entry on this thread was interrupted by a lost lease. */
	public static boolean anyInterruptedByLoss() {
		for (Entry entry : held()) {
			if (entry.interruptedByLoss()) {
				return true;
			}
		}
		return false;
	}

	public static OptionalLong currentFencingToken() {
		List<Entry> entries = held();
		return entries.isEmpty() ? OptionalLong.empty()
				: OptionalLong.of(entries.get(entries.size() - 1).fencingToken());
	}

	/**
	 * The keys of the active entries of this thread, outermost first, each without its
	 * engine's key prefix and listed once.
	 */
	public static List<String> currentKeys() {
		List<String> keys = new ArrayList<>();
		for (Entry entry : held()) {
			String prefix = entry.keyPrefix();
			for (String key : entry.keys()) {
				String shown = key.startsWith(prefix) ? key.substring(prefix.length()) : key;
				if (!keys.contains(shown)) {
					keys.add(shown);
				}
			}
		}
		return List.copyOf(keys);
	}

	private static void clearIfEmpty(Deque<WeakReference<Entry>> entries) {
		if (entries.isEmpty()) {
			held.remove();
		}
	}

}
