package io.lockstep.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.lockstep.internal.engine.AcquisitionEffectsTests.ms;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The machine's side of the contract with its drivers, over many seeded random walks of
 * what a driver can feed it (replies only to an attempt on its way, a registration only
 * while it registers; wake-ups, hand-offs to its token or an old one, timers, aborts at
 * any time, also after the end). After every answer it checks:
 * <ul>
 * <li>an answer is EndGate, then Undo, then at most one action, in that order;</li>
 * <li>an attempt's reply, and a registration while it registers, are always answered with
 * an action (the blocking driver has nothing to do otherwise);</li>
 * <li>the asking gate is ended at most once, exactly once by the end when the caller took
 * it, never when it did not;</li>
 * <li>it ends once, and an ended machine answers nothing;</li>
 * <li>an ending while an attempt is on its way undoes it (a grant that arrives after a
 * cancel, timeout or interrupt is given back).</li>
 * </ul>
 */
class AcquisitionContractWalkTests {

	private static final int WALKS = 20_000;

	private static final int STEPS = 14;

	enum Caller {

		/** Takes the gate; hears hand-offs (queued with the first attempt). */
		FIRST(Gates.FIRST, true),

		/** Takes the gate; does not hear hand-offs yet. */
		FIRST_NOT_HEARING(Gates.FIRST_NOT_HEARING, true),

		/** Finds the gate taken: registers first. */
		BEHIND(Gates.TAKEN, false);

		final Acquisition.Gate gate;

		final boolean takesGate;

		Caller(Acquisition.Gate gate, boolean takesGate) {
			this.gate = gate;
			this.takesGate = takesGate;
		}

	}

	@ParameterizedTest
	@EnumSource(Caller.class)
	void everyWalkKeepsTheContract(Caller caller) {
		Random random = new Random(19 + caller.ordinal());
		int gateEnds = 0;
		int walksEnded = 0;
		for (int walk = 0; walk < WALKS; walk++) {
			Walk w = new Walk(caller, random);
			w.run();
			gateEnds += w.gateEnds;
			walksEnded += (w.done != null) ? 1 : 0;
		}
		assertThat(walksEnded).as("walks that ended (of %d)", WALKS).isPositive();
		if (caller.takesGate) {
			assertThat(gateEnds).as("gate ends counted").isPositive();
		}
	}

	private static final class Walk {

		private final Caller caller;

		private final Random random;

		private final AtomicInteger tokens = new AtomicInteger();

		private final Acquisition machine;

		private final List<String> trace = new ArrayList<>();

		private long now;

		private boolean inFlight;

		private boolean registering;

		private Acquisition.Wait waiting;

		private Acquisition.Done done;

		int gateEnds;

		Walk(Caller caller, Random random) {
			this.caller = caller;
			this.random = random;
			long leaseMillis = random.nextBoolean() ? 300 : 30_000;
			this.machine = new Acquisition(
					new Acquisition.Terms(LockId.of("k"), ms(700), leaseMillis, Long.MAX_VALUE, true),
					new Acquisition.Inputs(() -> true, (lease) -> lease / 100 + 2_000_000L,
							() -> "t" + this.tokens.incrementAndGet(), (max) -> max),
					WaitPolicy.DEFAULTS);
		}

		void run() {
			check("start", this.machine.start(0, this.caller.gate), false);
			for (int step = 0; step < STEPS; step++) {
				this.now += this.random.nextInt(120);
				Acquisition.Event event = next();
				boolean reply = event instanceof Acquisition.Granted || event instanceof Acquisition.Held
						|| event instanceof Acquisition.AttemptFailed;
				boolean registered = event instanceof Acquisition.Registered;
				Acquisition.Phase before = this.machine.phase();
				boolean answers = (reply && before == Acquisition.Phase.ASKING)
						|| (registered && before == Acquisition.Phase.REGISTERING);
				boolean wasInFlight = this.inFlight;
				boolean ended = this.done != null;
				List<Acquisition.Effect> effects = this.machine.on(event, ms(this.now));
				if (reply) {
					this.inFlight = false;
				}
				if (registered) {
					// the driver feeds the registration's answer once, whatever came
					// before it
					this.registering = false;
				}
				if (ended) {
					assertThat(effects).as("an ended machine answers %s with nothing: %s", event, this.trace).isEmpty();
					continue;
				}
				check(event.toString(), effects, answers && this.done == null);
				if (this.done != null && wasInFlight && this.inFlightAtEnd(event)) {
					assertThat(effects).as("an ending while an attempt is on its way undoes it: %s", this.trace)
						.anyMatch(Acquisition.Undo.class::isInstance);
				}
			}
			if (this.done == null) {
				check("abort at the end",
						this.machine.on(new Acquisition.Aborted(new LockException("closed")), ms(this.now + 1)), false);
			}
			assertThat(this.done).as("ended: %s", this.trace).isNotNull();
			assertThat(this.gateEnds).as("asking gate ends by the end (%s): %s", this.caller, this.trace)
				.isEqualTo(this.caller.takesGate ? 1 : 0);
		}

		/** Whether the event that ended it left the attempt on its way unanswered. */
		private boolean inFlightAtEnd(Acquisition.Event event) {
			return !(event instanceof Acquisition.Granted || event instanceof Acquisition.Held
					|| event instanceof Acquisition.AttemptFailed);
		}

		private Acquisition.Event next() {
			List<Acquisition.Event> possible = new ArrayList<>();
			if (this.inFlight) {
				possible.add(new Acquisition.Granted(new long[] { 9 }, -1));
				possible.add(new Acquisition.Held(this.random.nextInt(2000), 0, this.random.nextInt(4)));
				possible.add(new Acquisition.Held(this.random.nextInt(2000), 0, this.random.nextInt(4)));
				possible.add(new Acquisition.AttemptFailed(new LockException("timed out")));
			}
			if (this.registering) {
				possible.add(new Acquisition.Registered(this.random.nextBoolean()));
				possible.add(new Acquisition.Registered(this.random.nextBoolean()));
			}
			String owner = (this.machine.owner() != null && this.random.nextInt(4) > 0) ? this.machine.owner() : "old";
			possible.add(
					new Acquisition.HandedOff(owner, this.random.nextInt(6), this.random.nextBoolean() ? 300 : 30_000));
			possible.add(new Acquisition.Released());
			possible.add(new Acquisition.Promoted());
			if (this.waiting != null) {
				possible.add(new Acquisition.TimerFired(this.waiting.timer()));
				possible.add(new Acquisition.TimerFired(this.waiting.timer()));
			}
			possible.add(new Acquisition.TimerFired(this.random.nextInt(3)));
			if (this.random.nextInt(6) == 0) {
				possible.add(new Acquisition.Aborted(new LockException("cancelled")));
			}
			Acquisition.Event event = possible.get(this.random.nextInt(possible.size()));
			this.trace.add(this.now + "ms " + event.getClass().getSimpleName());
			return event;
		}

		private void check(String what, List<Acquisition.Effect> effects, boolean mustAct) {
			this.trace.add(" -> " + effects.stream().map((e) -> e.getClass().getSimpleName()).toList());
			assertThat(effects).as("never null").isNotNull();
			int rank = 0;
			int actions = 0;
			for (Acquisition.Effect effect : effects) {
				int r = (effect instanceof Acquisition.EndGate) ? 0 : (effect instanceof Acquisition.Undo) ? 1 : 2;
				assertThat(r).as("order EndGate, Undo, action in %s: %s", effects, this.trace)
					.isGreaterThanOrEqualTo(rank);
				rank = r;
				if (effect.isAction()) {
					actions++;
				}
				if (effect instanceof Acquisition.EndGate) {
					this.gateEnds++;
					assertThat(this.gateEnds).as("gate ended at most once: %s", this.trace).isEqualTo(1);
					assertThat(this.caller.takesGate).as("gate ended by a caller that never took it: %s", this.trace)
						.isTrue();
				}
				if (effect instanceof Acquisition.Send) {
					this.inFlight = true;
					this.waiting = null;
				}
				else if (effect instanceof Acquisition.Register) {
					this.registering = true;
					this.waiting = null;
				}
				else if (effect instanceof Acquisition.Wait wait) {
					this.waiting = wait;
				}
				else if (effect instanceof Acquisition.Done ending) {
					assertThat(this.done).as("ended twice: %s", this.trace).isNull();
					this.done = ending;
					this.waiting = null;
				}
			}
			assertThat(actions).as("at most one action in %s: %s", effects, this.trace).isLessThanOrEqualTo(1);
			if (mustAct) {
				assertThat(actions).as("%s answered with an action: %s", what, this.trace).isEqualTo(1);
			}
		}

	}

}
