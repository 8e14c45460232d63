package io.lockstep.benchmarks;

import java.util.concurrent.locks.LockSupport;

/**
 * One acquire, critical section and release, checked by an {@link Occupancy}: what every
 * scenario but the hand-off one (which also stamps times) does per operation.
 */
final class CriticalSection {

	private CriticalSection() {
	}

	/**
	 * Acquires {@code key}, runs {@code entered}, stays inside for {@code nanos} (0:
	 * leaves at once) and releases it.
	 * @throws Occupancy.ExclusionViolation if another thread was inside at the same time
	 */
	static void run(Contender contender, String key, Occupancy occupancy, int keyIndex, long nanos, Runnable entered) {
		Contender.Held held = contender.acquire(key);
		try {
			occupancy.enter(keyIndex);
			try {
				entered.run();
				spend(nanos);
			}
			finally {
				occupancy.exit(keyIndex);
			}
		}
		finally {
			held.release();
		}
	}

	/** Parks until {@code nanos} have passed, without burning a core. */
	static void spend(long nanos) {
		if (nanos <= 0) {
			return;
		}
		long deadline = System.nanoTime() + nanos;
		long left = nanos;
		while (left > 0) {
			LockSupport.parkNanos(left);
			left = deadline - System.nanoTime();
		}
	}

}
