package io.lockstep.internal.engine;

/**
 * One caller waiting for one key, in its key's local queue ({@link Waiters}).
 */
final class Waiter {

	private final String key;

	/** The owner token it asks with. */
	private final String owner;

	/** Whether the lock is handed to it (it hears of that, not of releases). */
	private final boolean handOffs;

	private final Wake wake;

	/** Woken and not yet asked again: another wake-up is not needed. */
	private volatile boolean signalled;

	/** Whether a release of the key woke this waiter while it waited for it. */
	private volatile boolean woken;

	Waiter(String key, String owner, boolean handOffs, Wake wake) {
		this.key = key;
		this.owner = owner;
		this.handOffs = handOffs;
		this.wake = wake;
	}

	String key() {
		return this.key;
	}

	/** It asks again now: the next release wakes it again. */
	void rearm() {
		this.signalled = false;
	}

	/** The owner token it asks with. */
	String owner() {
		return this.owner;
	}

	boolean handOffs() {
		return this.handOffs;
	}

	Wake wake() {
		return this.wake;
	}

	/** Whether it asks for a share of the key (see {@link Wake#shared()}). */
	boolean shared() {
		return this.wake.shared();
	}

	/** Whether a release of the key woke it while it waited for it. */
	boolean woken() {
		return this.woken;
	}

	/** It is the head now: it takes over the re-checks, and asks at once. */
	void promote() {
		this.signalled = true;
		this.wake.promoted();
	}

	boolean signal() {
		if (this.signalled) {
			return false;
		}
		this.woken = true;
		this.signalled = true;
		this.wake.released();
		return true;
	}

}
