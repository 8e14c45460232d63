package io.lockstep.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A scenario of many threads on one key that admits more than one holder (a read/write
 * lock, a semaphore), one shared client, 1 ms inside: every acquisition is checked by a
 * {@link SharedOccupancy}, and the trial records the most holders seen inside at once and
 * the writes among its acquisitions. A trial in which no two holders were ever inside
 * together fails: the key was not shared.
 */
public abstract class SharedKeyBenchmark extends LockBenchmark {

	static final long SECTION_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	final SharedOccupancy shared = new SharedOccupancy();

	private final LongAdder writes = new LongAdder();

	/** A reader of {@code key}: acquire, 1 ms inside, release. */
	final void read(Slot slot, String key) {
		hold(slot, client(slot).acquireRead(key), this.shared::enterRead, this.shared::exitRead);
	}

	/** A writer of {@code key}: acquire, 1 ms inside, release; counted as a write. */
	final void write(Slot slot, String key) {
		hold(slot, client(slot).acquireWrite(key), this.shared::enterWrite, this.shared::exitWrite);
		if (this.measuring) {
			this.writes.increment();
		}
	}

	/**
	 * A holder of one of the {@code permits} of {@code key}: acquire, 1 ms inside,
	 * release.
	 */
	final void permit(Slot slot, String key, int permits) {
		hold(slot, client(slot).acquirePermit(key, permits), () -> this.shared.enterPermit(permits),
				this.shared::exitPermit);
	}

	private void hold(Slot slot, Contender.Held held, Runnable enter, Runnable exit) {
		try {
			enter.run();
			try {
				acquired(slot);
				CriticalSection.spend(SECTION_NANOS);
			}
			finally {
				exit.run();
			}
		}
		finally {
			held.release();
		}
	}

	@Override
	void trialEnded(TrialRecord record) {
		record.mostInside = this.shared.mostInside();
		record.writes = this.writes.sum();
		if (record.mostInside < 2) {
			throw new IllegalStateException(record.scenario + " " + record.contender + ": never more than "
					+ record.mostInside + " holder inside at once, so the key was not shared");
		}
	}

}
