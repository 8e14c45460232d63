package io.lockstep.benchmarks;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * A scenario of many threads on one key that admits more than one holder (a read/write
 * lock, a semaphore), one shared client, 1 ms inside: every acquisition is checked by a
 * {@link SharedOccupancy}, and each measurement iteration reports the most holders seen
 * inside at once ({@code most inside}) and the share of writes among its acquisitions
 * ({@code writes}, RW). A trial in which no two holders were ever inside together fails:
 * the key was not shared.
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
	void iterationStarted() {
		this.writes.reset();
	}

	@Override
	void iterationEnded(List<Result<?>> results, long acquisitions, long nanos) {
		results.add(new ScalarResult("most inside", this.shared.mostInside(), "#", AggregationPolicy.MAX));
		if (acquisitions > 0) {
			results
				.add(new ScalarResult("writes", 100.0 * this.writes.sum() / acquisitions, "%", AggregationPolicy.AVG));
		}
	}

	@Override
	void trialEnded() {
		if (this.shared.mostInside() < 2) {
			throw new IllegalStateException(getClass().getSimpleName() + " " + this.contender + ": never more than "
					+ this.shared.mostInside() + " holder inside at once, so the key was not " + "shared");
		}
	}

}
