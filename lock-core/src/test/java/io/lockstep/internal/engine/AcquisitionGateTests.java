package io.lockstep.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.junit.jupiter.api.Test;

import static io.lockstep.internal.engine.AcquisitionEffectsTests.action;
import static io.lockstep.internal.engine.AcquisitionEffectsTests.ms;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key's asking gate, as the pure {@link Acquisition} alone decides it: who asks
 * first, who joins the local queue, and when the gate it took ends.
 */
class AcquisitionGateTests {

	private final AtomicInteger tokens = new AtomicInteger();

	private Acquisition machine(LockId id, long waitMillis) {
		return new Acquisition(new Acquisition.Terms(id, ms(waitMillis), 30_000, Long.MAX_VALUE, id.size() == 1),
				new Acquisition.Inputs(() -> true, (lease) -> lease / 100 + 2_000_000L,
						() -> "t" + this.tokens.incrementAndGet(), (max) -> max),
				WaitPolicy.DEFAULTS);
	}

	@Test
	void anAbortWhileTheFirstCallersAttemptIsOnItsWayEndsItsAskingGate() {
		Acquisition machine = machine(LockId.of("k"), 5000);
		List<Acquisition.Effect> first = machine.start(0, Gates.FIRST);
		assertThat(first).as("the first caller asks; its attempt is on its way")
			.singleElement()
			.isInstanceOf(Acquisition.Send.class);
		List<Acquisition.Effect> aborted = machine.on(new Acquisition.Aborted(new LockException("cancelled")), ms(1));
		assertThat(action(aborted)).isInstanceOf(Acquisition.Done.class);
		assertThat(aborted).as("the asking gate ended by the abort (the machine ended, nothing ends it later)")
			.first()
			.isEqualTo(new Acquisition.EndGate("k"));
	}

	@Test
	void theFirstCallerAsksQueuedOnlyWhereItHearsHandOffs() {
		Acquisition.Send hearing = (Acquisition.Send) action(machine(LockId.of("k"), 5000).start(0, Gates.FIRST));
		Acquisition.Send deaf = (Acquisition.Send) action(
				machine(LockId.of("k"), 5000).start(0, Gates.FIRST_NOT_HEARING));
		assertThat(hearing.entryMillis()).as("queued with its first attempt").isPositive();
		assertThat(deaf.entryMillis()).as("not queued: a hand-off would not reach it").isZero();
		assertThat(hearing.rearm()).as("re-armed before it registered").isFalse();
	}

	@Test
	void aCallerThatFindsTheGateTakenJoinsTheLocalQueueFirst() {
		Acquisition machine = machine(LockId.of("k"), 5000);
		assertThat(machine.start(0, Gates.TAKEN)).singleElement().isInstanceOf(Acquisition.Register.class);
		Acquisition.Send send = (Acquisition.Send) action(machine.on(new Acquisition.Registered(true), ms(1)));
		assertThat(send.rearm()).as("a registered waiter is re-armed when it asks").isTrue();
		List<Acquisition.Effect> held = machine.on(new Acquisition.Held(10_000, 0, 1), ms(2));
		assertThat(held).as("no gate to end: it never took it").noneMatch(Acquisition.EndGate.class::isInstance);
	}

	@Test
	void theGateEndsOnceWhenTheFirstAttemptIsAnswered() {
		Acquisition machine = machine(LockId.of("k"), 5000);
		machine.start(0, Gates.FIRST);
		List<Acquisition.Effect> held = machine.on(new Acquisition.Held(10_000, 0, 1), ms(1));
		assertThat(held).first().isEqualTo(new Acquisition.EndGate("k"));
		assertThat(action(held)).isInstanceOf(Acquisition.Register.class);
		List<Acquisition.Effect> later = new ArrayList<>(machine.on(new Acquisition.Registered(true), ms(2)));
		later.addAll(machine.on(new Acquisition.Aborted(new LockException("cancelled")), ms(3)));
		assertThat(later).as("ended once").noneMatch(Acquisition.EndGate.class::isInstance);
	}

	@Test
	void sharesAndCallersThatDoNotWaitAskWithoutTheGate() {
		Acquisition.Gate refuses = new Acquisition.Gate((key) -> {
			throw new AssertionError("the gate was asked for " + key);
		}, (key) -> true);
		LockId read = LockId.of("k", Sharing.READ);
		assertThat(action(machine(read, 5000).start(0, refuses))).as("a share asks at once")
			.isInstanceOf(Acquisition.Send.class);
		assertThat(action(machine(LockId.of("k"), 0).start(0, refuses))).as("a try-lock asks at once")
			.isInstanceOf(Acquisition.Send.class);
		assertThat(action(machine(LockId.of(List.of("a", "b")), 5000).start(0, refuses)))
			.as("a lock of several keys asks at once")
			.isInstanceOf(Acquisition.Send.class);
	}

}
