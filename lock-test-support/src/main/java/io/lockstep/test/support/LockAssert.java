package io.lockstep.test.support;

import java.util.List;

import io.lockstep.DistributedLocks;

/**
 * Assertions about the locks held by the current call, for code that runs inside the
 * method under test: a fake or a spy of a collaborator that the method calls, or a
 * callback. They throw {@link AssertionError} with a message that says what was held.
 * Keys are named as the locks name them ({@code <name>:<key>} for
 * {@code @DistributedLock(name = ...)}, without the key prefix), as
 * {@link DistributedLocks#currentLockKeys()} lists them.
 *
 * <pre class="code">
 * doAnswer((call) -&gt; {
 *     LockAssert.assertLocked("orders:42");
 *     return null;
 * }).when(this.stock).deduct("sku-7", 2);
 * </pre>
 *
 * The locks of {@code Mono}/{@code Flux} methods, taken on subscription, are not seen
 * here.
 *
 * @see TestLocks#assertRanUnderLock(String, String)
 */
public final class LockAssert {

	static final String BYPASS_HINT = "Is the method called through its Spring bean? A call from inside the same "
			+ "bean bypasses the proxy, and with it @DistributedLock.";

	private LockAssert() {
	}

	/**
	 * Asserts that the current call holds at least one lock.
	 * @throws AssertionError when it holds none
	 */
	public static void assertLocked() {
		if (DistributedLocks.currentLockKeys().isEmpty()) {
			throw new AssertionError("Expected the current call (thread '" + Thread.currentThread().getName()
					+ "') to hold a lock, but it holds none. " + BYPASS_HINT);
		}
	}

	/**
	 * Asserts that the current call holds the lock of {@code key}.
	 * @param key the key as the lock names it, e.g. {@code orders:42}
	 * @throws AssertionError when it does not
	 */
	public static void assertLocked(String key) {
		List<String> held = DistributedLocks.currentLockKeys();
		if (!held.contains(key)) {
			throw new AssertionError("Expected the current call (thread '" + Thread.currentThread().getName()
					+ "') to hold the lock '" + key + "', but it holds " + describe(held) + "."
					+ (held.isEmpty() ? " " + BYPASS_HINT : ""));
		}
	}

	/**
	 * Asserts that the current call holds no lock.
	 * @throws AssertionError when it holds one
	 */
	public static void assertNotLocked() {
		List<String> held = DistributedLocks.currentLockKeys();
		if (!held.isEmpty()) {
			throw new AssertionError("Expected the current call (thread '" + Thread.currentThread().getName()
					+ "') to hold no lock, but it holds " + describe(held) + ".");
		}
	}

	static String describe(List<String> keys) {
		return keys.isEmpty() ? "none" : keys.toString();
	}

}
