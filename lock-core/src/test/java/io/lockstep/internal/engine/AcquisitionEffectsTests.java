package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The effects the pure {@link Acquisition} answers events with, in cases the exploration
 * reaches only at its depth's edge: a hand-off confirmed while registering, a promotion
 * before a stale registration, a failed re-check of a queued waiter.
 */
class AcquisitionEffectsTests {

	private final AtomicInteger tokens = new AtomicInteger();

	private Acquisition machine(long leaseMillis) {
		return new Acquisition(new Acquisition.Terms(LockId.of("k"), ms(5000), leaseMillis, Long.MAX_VALUE, true),
				new Acquisition.Inputs(() -> true, (lease) -> lease / 100 + 2_000_000L,
						() -> "t" + this.tokens.incrementAndGet(), (max) -> max),
				WaitPolicy.DEFAULTS);
	}

	/**
	 * A hand-off claimed at registration (it came while the first attempt was on its way)
	 * with less than half its lease left is confirmed by one more attempt: the Send comes
	 * from the HandedOff event, and the Registered answer after it is empty (nothing
	 * new), so the driver keeps the Send as what it does next.
	 */
	@Test
	void aHandOffConfirmedWhileRegisteringLeavesTheRegisteredAnswerEmpty() {
		Acquisition machine = machine(300);
		Acquisition.Send send = (Acquisition.Send) action(machine.start(0, Gates.FIRST));
		assertThat(send.entryMillis()).isPositive();
		assertThat(action(machine.on(new Acquisition.Held(100, 0, 6), ms(160))))
			.isInstanceOf(Acquisition.Register.class);
		List<Acquisition.Effect> handOff = machine.on(new Acquisition.HandedOff(send.owner(), 7, 300), ms(161));
		assertThat(action(handOff)).as("confirmed by one more attempt").isInstanceOf(Acquisition.Send.class);
		assertThat(((Acquisition.Send) action(handOff)).rearm()).as("re-armed: it registered").isTrue();
		List<Acquisition.Effect> registered = machine.on(new Acquisition.Registered(true), ms(162));
		assertThat(registered).as("the answer after the hand-off's Send").isEmpty();
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
		assertThat(action(machine.start(0, Gates.TAKEN))).isInstanceOf(Acquisition.Register.class);
		assertThat(machine.on(new Acquisition.Promoted(), ms(1))).as("nothing new while registering").isEmpty();
		Acquisition.Send send = (Acquisition.Send) action(machine.on(new Acquisition.Registered(false), ms(2)));
		assertThat(send.entryMillis()).as("the head queues in storage").isPositive();
		Acquisition.Wait wait = (Acquisition.Wait) action(machine.on(new Acquisition.Held(20_000, 0, 5), ms(3)));
		assertThat(wait.untilNanos()).as("the head re-checks within %d ms", 500)
			.isLessThanOrEqualTo(ms(3) + WaitPolicy.DEFAULTS.headRecheck().toNanos());
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
		Acquisition.Send first = (Acquisition.Send) action(machine.start(0, Gates.FIRST));
		assertThat(first.entryMillis()).as("queued with its first attempt").isPositive();
		assertThat(action(machine.on(new Acquisition.Held(20_000, 0, 5), ms(1))))
			.isInstanceOf(Acquisition.Register.class);
		Acquisition.Wait wait = (Acquisition.Wait) action(machine.on(new Acquisition.Registered(true), ms(2)));
		Acquisition.Send recheck = (Acquisition.Send) action(
				machine.on(new Acquisition.TimerFired(wait.timer()), ms(502)));
		assertThat(recheck.owner()).isEqualTo(first.owner());
		LockException timedOut = new LockException("Redis did not answer within 2s to acquire 'k'");
		List<Acquisition.Effect> failed = machine.on(new Acquisition.AttemptFailed(timedOut), ms(2502));
		Acquisition.Done done = (Acquisition.Done) action(failed);
		assertThat(done.phase()).isEqualTo(Acquisition.Phase.FAILED);
		assertThat(done.failure())
			.hasMessage("Could not acquire lock 'k': Redis did not answer within 2s to acquire 'k'")
			.hasCause(timedOut);
		Acquisition.Undo undo = failed.stream()
			.filter(Acquisition.Undo.class::isInstance)
			.map(Acquisition.Undo.class::cast)
			.findFirst()
			.orElseThrow();
		assertThat(undo.owner()).isEqualTo(first.owner());
		assertThat(undo.leave()).isTrue();
		assertThat(failed).as("undone, then done (the gate ended when it registered)")
			.map(Object::getClass)
			.containsExactly(Acquisition.Undo.class, Acquisition.Done.class);
		assertThat(this.tokens.get()).as("owner tokens drawn").isEqualTo(1);
		assertThat(machine.on(new Acquisition.HandedOff(first.owner(), 7, 30_000), ms(2600)))
			.as("a hand-off after the end")
			.isEmpty();
	}

	/**
	 * The timings come from the wait policy: a short one shortens the queue entry an
	 * attempt asks for (and the undo's retries) and the head's re-check.
	 */
	@Test
	void aShortWaitPolicyShortensTheQueueEntryAndTheHeadsRecheck() {
		WaitPolicy waits = new WaitPolicy(Duration.ofMillis(300), Duration.ofSeconds(1), Duration.ofMillis(50),
				Duration.ofMillis(1), Duration.ofMillis(10), WaitPolicy.DEFAULTS.local());
		Acquisition machine = new Acquisition(
				new Acquisition.Terms(LockId.of("k"), ms(5000), 30_000, Long.MAX_VALUE, true),
				new Acquisition.Inputs(() -> true, (lease) -> lease / 100 + 2_000_000L,
						() -> "t" + this.tokens.incrementAndGet(), (max) -> max),
				waits);
		Acquisition.Send send = (Acquisition.Send) action(machine.start(0, Gates.FIRST));
		assertThat(send.entryMillis()).as("the queue entry asked, ms").isEqualTo(300);
		machine.on(new Acquisition.Held(20_000, 0, 5), ms(1));
		Acquisition.Wait wait = (Acquisition.Wait) action(machine.on(new Acquisition.Registered(true), ms(2)));
		assertThat(wait.untilNanos()).as("the head re-checks within 50 ms").isEqualTo(ms(2) + ms(50));
	}

	/** The action among the effects (an answer has one at most), or {@code null}. */
	static Acquisition.Effect action(List<Acquisition.Effect> effects) {
		List<Acquisition.Effect> actions = effects.stream().filter(Acquisition.Effect::isAction).toList();
		assertThat(actions).as("actions in one answer").hasSizeLessThanOrEqualTo(1);
		return actions.isEmpty() ? null : actions.get(0);
	}

	static long ms(long millis) {
		return TimeUnit.MILLISECONDS.toNanos(millis);
	}

	/**
	 * A waiter promoted behind a holder of its own client does not ask: it waits, with
	 * the head's re-check, for that holder's release; the lock that release hands it is
	 * taken at once, its lease counted from when the release was sent.
	 */
	@Test
	void aWaiterPromotedBehindALocalHolderWaitsForItsReleaseAndTakesWhatItHands() {
		Acquisition machine = machine(30_000);
		assertThat(action(machine.start(0, Gates.TAKEN))).isInstanceOf(Acquisition.Register.class);
		assertThat(action(machine.on(new Acquisition.Registered(false), ms(1)))).isInstanceOf(Acquisition.Wait.class);
		Acquisition.Wait wait = (Acquisition.Wait) action(machine.on(new Acquisition.PromotedBehind(), ms(2)));
		assertThat(wait.untilNanos()).as("the head re-checks within %d ms", 500)
			.isLessThanOrEqualTo(ms(2) + WaitPolicy.DEFAULTS.headRecheck().toNanos());
		assertThat(machine.on(new Acquisition.HandedOffHere("another", 8, 5000, ms(3)), ms(4)))
			.as("handed to another owner token")
			.isEmpty();
		Acquisition.Done done = (Acquisition.Done) action(
				machine.on(new Acquisition.HandedOffHere(machine.owner(), 9, 5000, ms(3)), ms(4)));
		assertThat(done.phase()).isEqualTo(Acquisition.Phase.ACQUIRED);
		assertThat(done.grant().fencingTokens()).containsExactly(9);
		assertThat(done.grant().sentNanos()).as("counted from the release's send").isEqualTo(ms(3));
		assertThat(done.grant().grantedNanos()).isEqualTo(ms(5000));
	}

	/**
	 * A lock a release of its own client hands to a waiter whose attempt is on its way
	 * (here its last, at its deadline, which does not queue it) is left, released under
	 * the owner token, when that attempt fails: the waiter ends without the lock it was
	 * handed.
	 */
	@Test
	void aLockHandedByALocalReleaseWhileAnAttemptIsOnItsWayIsLeftWhenTheAttemptFails() {
		Acquisition machine = machine(30_000);
		assertThat(action(machine.start(0, Gates.TAKEN))).isInstanceOf(Acquisition.Register.class);
		Acquisition.Wait wait = (Acquisition.Wait) action(machine.on(new Acquisition.Registered(false), ms(1)));
		Acquisition.Send last = (Acquisition.Send) action(
				machine.on(new Acquisition.TimerFired(wait.timer()), wait.untilNanos()));
		assertThat(last.entryMillis()).as("the last attempt does not queue").isZero();
		assertThat(machine.on(new Acquisition.HandedOffHere(last.owner(), 9, 5000, wait.untilNanos()),
				wait.untilNanos() + ms(1)))
			.as("kept until the attempt's reply")
			.isEmpty();
		List<Acquisition.Effect> failed = machine
			.on(new Acquisition.AttemptFailed(new LockException("Redis did not answer")), wait.untilNanos() + ms(2));
		assertThat(((Acquisition.Done) action(failed)).phase()).isEqualTo(Acquisition.Phase.FAILED);
		Acquisition.Undo undo = (Acquisition.Undo) failed.get(0);
		assertThat(undo.owner()).isEqualTo(last.owner());
		assertThat(undo.leave()).as("leaves, releasing what was handed").isTrue();
	}

}
