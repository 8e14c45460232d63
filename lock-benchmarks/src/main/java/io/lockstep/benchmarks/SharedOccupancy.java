package io.lockstep.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The safety check of one key that admits more than one holder: who is inside its
 * critical section right now, in one atomic word (writers × {@value #WRITER} + others),
 * so that of two holders that overlap, the one that enters second always sees the first.
 * A read/write lock breaks when anyone is inside together with a writer; a semaphore of
 * {@code n} permits when {@code n + 1} are inside. Either fails the benchmark at once. It
 * also keeps the most holders seen inside at once, to show that readers or permit holders
 * did share the key (a read lock that never let two readers in would be an exclusive lock
 * in disguise).
 */
final class SharedOccupancy {

	private static final int WRITER = 1 << 16;

	private final AtomicInteger inside = new AtomicInteger();

	private final AtomicInteger mostInside = new AtomicInteger();

	/**
	 * A reader enters.
	 * @throws Occupancy.ExclusionViolation if a writer is inside (nothing to exit then)
	 */
	void enterRead() {
		int now = this.inside.incrementAndGet();
		if (now >= WRITER) {
			this.inside.decrementAndGet();
			throw new Occupancy.ExclusionViolation(
					"Read/write exclusion broken: a reader entered while a writer was inside");
		}
		this.mostInside.accumulateAndGet(now, Math::max);
	}

	void exitRead() {
		this.inside.decrementAndGet();
	}

	/**
	 * A writer enters.
	 * @throws Occupancy.ExclusionViolation if anyone else is inside (nothing to exit
	 * then)
	 */
	void enterWrite() {
		int now = this.inside.addAndGet(WRITER);
		if (now != WRITER) {
			this.inside.addAndGet(-WRITER);
			throw new Occupancy.ExclusionViolation("Read/write exclusion broken: a writer entered while "
					+ (now / WRITER - 1) + " other writer(s) and " + (now % WRITER) + " reader(s) were inside");
		}
		this.mostInside.accumulateAndGet(1, Math::max);
	}

	void exitWrite() {
		this.inside.addAndGet(-WRITER);
	}

	/**
	 * A permit holder of a semaphore of {@code permits} enters.
	 * @throws Occupancy.ExclusionViolation if that makes more than {@code permits} inside
	 * (nothing to exit then)
	 */
	void enterPermit(int permits) {
		int now = this.inside.incrementAndGet();
		if (now > permits) {
			this.inside.decrementAndGet();
			throw new Occupancy.ExclusionViolation(
					"Semaphore broken: " + now + " holders inside at once, with " + permits + " permits");
		}
		this.mostInside.accumulateAndGet(now, Math::max);
	}

	void exitPermit() {
		this.inside.decrementAndGet();
	}

	/** The most holders inside at once so far (readers, or permit holders). */
	int mostInside() {
		return this.mostInside.get();
	}

}
