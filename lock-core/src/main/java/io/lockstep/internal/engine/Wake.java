package io.lockstep.internal.engine;

/**
 * What a waiter hears; called under the waiters' monitor, possibly on the storage
 * client's I/O thread, so it only hands the news over to the waiter's driver.
 */
interface Wake {

	/** A release may have freed the key. */
	void released();

	/** It became the head of its kind: it asks now. */
	void promoted();

	/** The storage handed the key to the owner token. */
	void handedOff(String owner, long fencingToken, long leaseMillis);

	/** The client closed. */
	void closed();

	/**
	 * Whether the waiter asks for a share of the key (a read lock or a semaphore's
	 * permit): a release may admit several such waiters at once, so it wakes every one of
	 * them that waits in line before the next exclusive waiter.
	 */
	default boolean shared() {
		return false;
	}

}
