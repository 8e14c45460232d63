package io.lockstep.internal.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Review reproducers against the pure {@link Acquisition}: what the exploration does not
 * check (the first caller's asking gate) and what a driver must do with each step.
 */
class AcquisitionReviewTests {

	private final AtomicInteger tokens = new AtomicInteger();

	private Acquisition machine(long leaseMillis) {
		return new Acquisition(
				new Acquisition.Terms(LockId.of("k"), ms(5000), leaseMillis, Long.MAX_VALUE, true, () -> true,
						(lease) -> lease / 100 + 2_000_000L, () -> "t" + this.tokens.incrementAndGet(), (max) -> max));
	}

	@Test
	void anAbortWhileTheFirstCallersAttemptIsOnItsWayEndsItsAskingGate() {
		Acquisition machine = machine(30_000);
		Acquisition.Step first = machine.start(0, true, true);
		assertThat(first.action()).isInstanceOf(Acquisition.Send.class);
		assertThat(first.endAsking()).isFalse();
		Acquisition.Step aborted = machine.on(new Acquisition.Aborted(new LockException("cancelled")), ms(1));
		assertThat(aborted.action()).isInstanceOf(Acquisition.Done.class);
		assertThat(aborted.endAsking())
			.as("the asking gate ended by the abort (the machine ended, nothing ends it later)")
			.isTrue();
	}

	/**
	 * A hand-off claimed at registration (it came while the first attempt was on its way)
	 * with less than half its lease left is confirmed by one more attempt: the Send comes
	 * from the HandedOff event, and the Registered answer after it yields no action at
	 * all. A driver that keeps only the answer's action (BlockingAcquirer.inOrder) loses
	 * the Send.
	 */
	@Test
	void aHandOffConfirmedWhileRegisteringLeavesTheRegisteredAnswerWithoutAnAction() {
		Acquisition machine = machine(300);
		Acquisition.Step first = machine.start(0, true, true);
		Acquisition.Send send = (Acquisition.Send) first.action();
		assertThat(send.entryMillis()).isPositive();
		Acquisition.Step held = machine.on(new Acquisition.Held(100, 0, 6), ms(160));
		assertThat(held.action()).isInstanceOf(Acquisition.Register.class);
		Acquisition.Step handOff = machine.on(new Acquisition.HandedOff(send.owner(), 7, 300), ms(161));
		assertThat(handOff.action()).as("confirmed by one more attempt").isInstanceOf(Acquisition.Send.class);
		Acquisition.Step registered = machine.on(new Acquisition.Registered(true), ms(162));
		assertThat(registered.action()).as("the answer after the hand-off's Send").isNull();
	}

	/**
	 * Registered carries a snapshot of isHead() taken before the driver posts it; a
	 * promotion in between is posted (and fed) first. The machine then overwrites the
	 * promotion with the stale snapshot: a hand-off waiter that is the key's head asks
	 * without queueing and then waits until its deadline like a non-head (no re-check
	 * timer; releases skip hand-off waiters where notifications work; no promotion will
	 * come).
	 */
	@Test
	void aPromotionFedBeforeAStaleRegisteredAnswerKeepsTheWaiterTheHead() {
		Acquisition machine = machine(30_000);
		Acquisition.Step first = machine.start(0, false, false);
		assertThat(first.action()).isInstanceOf(Acquisition.Register.class);
		machine.on(new Acquisition.Promoted(), ms(1));
		Acquisition.Step registered = machine.on(new Acquisition.Registered(false), ms(2));
		Acquisition.Send send = (Acquisition.Send) registered.action();
		assertThat(send.entryMillis()).as("the head queues in storage").isPositive();
		Acquisition.Step held = machine.on(new Acquisition.Held(20_000, 0, 5), ms(3));
		Acquisition.Wait wait = (Acquisition.Wait) held.action();
		assertThat(wait.untilNanos()).as("the head re-checks within %d ms", 500)
			.isLessThanOrEqualTo(ms(3) + HeadWait.RECHECK_NANOS);
	}

	/**
	 * Only a lock held by another owner is worth waiting for: a queued head whose
	 * re-check fails ends at once with that failure (its wait has 29 s left), leaving the
	 * queue under the owner token it queued with; no new token is drawn, and a hand-off
	 * to the old one that comes later changes nothing.
	 */
	@Test
	void aQueuedWaiterWhoseRecheckFailsEndsAtOnceAndLeavesTheQueueUnderItsToken() {
		Acquisition machine = machine(30_000);
		Acquisition.Send first = (Acquisition.Send) machine.start(0, true, true).action();
		assertThat(first.entryMillis()).as("queued with its first attempt").isPositive();
		assertThat(machine.on(new Acquisition.Held(20_000, 0, 5), ms(1)).action())
			.isInstanceOf(Acquisition.Register.class);
		Acquisition.Wait wait = (Acquisition.Wait) machine.on(new Acquisition.Registered(true), ms(2)).action();
		Acquisition.Send recheck = (Acquisition.Send) machine.on(new Acquisition.TimerFired(wait.timer()), ms(502))
			.action();
		assertThat(recheck.owner()).isEqualTo(first.owner());
		LockException timedOut = new LockException("Redis did not answer within 2s to acquire 'k'");
		Acquisition.Step failed = machine.on(new Acquisition.AttemptFailed(timedOut), ms(2502));
		Acquisition.Done done = (Acquisition.Done) failed.action();
		assertThat(done.phase()).isEqualTo(Acquisition.Phase.FAILED);
		assertThat(done.failure())
			.hasMessage("Could not acquire lock 'k': Redis did not answer within 2s to acquire 'k'")
			.hasCause(timedOut);
		assertThat(failed.undo().owner()).isEqualTo(first.owner());
		assertThat(failed.undo().leave()).isTrue();
		assertThat(this.tokens.get()).as("owner tokens drawn").isEqualTo(1);
		assertThat(machine.on(new Acquisition.HandedOff(first.owner(), 7, 30_000), ms(2600)).action())
			.as("a hand-off after the end")
			.isNull();
	}

	private static long ms(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

}
