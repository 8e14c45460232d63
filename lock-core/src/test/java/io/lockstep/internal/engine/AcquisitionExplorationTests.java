package io.lockstep.internal.engine;

import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives the pure {@link Acquisition} through every interleaving, up to a bounded depth,
 * of what can happen to one caller of a one-key lock held by another client: its attempt
 * runs, fails (and still runs later, never runs, or ran with its reply lost) or replies;
 * the holder releases (a hand-off to the first live queued owner, or a release
 * notification; a holder of the caller's own client may instead hand the lock to the
 * caller, named as its successor, while no one is queued, and the caller may be promoted
 * behind it first); a rival client takes the key while it is free; hand-off messages come
 * early, late, twice or for an owner token it left; time passes; timers fire; the caller
 * is cancelled, also after it ended; the connection drops, losing what it had not written
 * (undos are sent again until they land or what they give back has expired). The storage
 * is a model of the Lua scripts' effects on one key, its queue and its fencing counter,
 * with one ordered connection for the caller's attempts and undos. After every step it
 * checks:
 * <ul>
 * <li>a failed attempt ends the acquisition at once, with its failure as the cause (only
 * a lock held by another owner is worth waiting for);</li>
 * <li>the work is entered only with a grant of the caller's current owner token that the
 * storage holds now, whose local deadline is not after the key's expiry in the storage,
 * not already past, and that no command on its way will release;</li>
 * <li>nothing is undone under the owner token of a lease it took (no loss reported for a
 * lease never held, and none for one held);</li>
 * <li>every ending, once the connection has run what was sent (at the end of each
 * schedule, after any drop), leaves no queue entry and no key under any of the caller's
 * old tokens;</li>
 * <li>no wait ends after the caller's deadline;</li>
 * <li>every answer holds one action at most (what the driver does next), never
 * {@code null}.</li>
 * </ul>
 */
class AcquisitionExplorationTests {

	private static final long TICK_MILLIS = 150;

	private static final long WAIT_MILLIS = 700;

	private static final int DEPTH = Integer.getInteger("lockstep.exploration.depth", 10);

	/** The lock's terms and where the caller starts. */
	enum Scenario {

		/**
		 * A fixed 300 ms lease; the first caller, which hears hand-offs, queues at once.
		 */
		SHORT_LEASE_QUEUED_FIRST(300, 0, true, true),

		/** Max-hold 1 s below a 3 s lease; the first caller queues at once. */
		MAX_HOLD_BELOW_LEASE(3000, 1000, true, true),

		/** A 300 ms lease; a caller behind other local callers registers first. */
		SHORT_LEASE_REGISTERED(300, 0, false, false),

		/**
		 * Max-hold 1 s; the first caller does not hear hand-offs yet: asks, then queues.
		 */
		MAX_HOLD_ASKS_THEN_QUEUES(3000, 1000, true, false),

		/**
		 * A 300 ms lease held by a caller of the same client, behind which this caller
		 * registers: it may be promoted behind that holder, whose release may hand it the
		 * lock (or, not handing it, promote it).
		 */
		SHORT_LEASE_BEHIND_LOCAL_HOLDER(300, 0, false, false, true);

		final long leaseMillis;

		final long maxHoldMillis;

		final boolean firstCaller;

		final boolean hearsHandOffs;

		final boolean localHolder;

		Scenario(long leaseMillis, long maxHoldMillis, boolean firstCaller, boolean hearsHandOffs) {
			this(leaseMillis, maxHoldMillis, firstCaller, hearsHandOffs, false);
		}

		Scenario(long leaseMillis, long maxHoldMillis, boolean firstCaller, boolean hearsHandOffs,
				boolean localHolder) {
			this.leaseMillis = leaseMillis;
			this.maxHoldMillis = maxHoldMillis;
			this.firstCaller = firstCaller;
			this.hearsHandOffs = hearsHandOffs;
			this.localHolder = localHolder;
		}

		long grantedMillis() {
			return (this.maxHoldMillis > 0) ? Math.min(this.leaseMillis, this.maxHoldMillis) : this.leaseMillis;
		}

		/**
		 * How deep schedules go: one step less behind a local holder, whose three more
		 * moves (a promotion behind it, its hand-off, its promotion) make each step
		 * several times wider (4.2 million states at the full depth, 0 violations).
		 */
		int depth() {
			return this.localHolder ? DEPTH - 1 : DEPTH;
		}

	}

	@ParameterizedTest
	@EnumSource(Scenario.class)
	void everyInterleavingKeepsTheProtocolsRules(Scenario scenario) {
		Explorer explorer = new Explorer(scenario);
		explorer.explore(new ArrayList<>());
		System.out.printf(
				"%s: %,d states, %,d schedules explored to depth %d (%,d acquired, %,d timed out, "
						+ "%,d failed, %,d aborted)%n",
				scenario, explorer.seen.size(), explorer.schedules, scenario.depth(),
				explorer.endings.getOrDefault(Acquisition.Phase.ACQUIRED, 0),
				explorer.endings.getOrDefault(Acquisition.Phase.TIMED_OUT, 0),
				explorer.endings.getOrDefault(Acquisition.Phase.FAILED, 0),
				explorer.endings.getOrDefault(Acquisition.Phase.ABORTED, 0));
		assertThat(explorer.violations).as("violations (first of each kind)").isEmpty();
		assertThat(explorer.endings.getOrDefault(Acquisition.Phase.ACQUIRED, 0)).isPositive();
		assertThat(explorer.endings.getOrDefault(Acquisition.Phase.TIMED_OUT, 0)
				+ explorer.endings.getOrDefault(Acquisition.Phase.ABORTED, 0))
			.isPositive();
		assertThat(explorer.endings.getOrDefault(Acquisition.Phase.FAILED, 0)).isPositive();
	}

	/**
	 * Depth-first over schedules, each replayed from the start; states seen are pruned.
	 */
	private static final class Explorer {

		private final Scenario scenario;

		private final Map<String, Integer> seen = new HashMap<>();

		private final Map<Acquisition.Phase, Integer> endings = new HashMap<>();

		private final Map<String, String> violations = new LinkedHashMap<>();

		private long schedules;

		Explorer(Scenario scenario) {
			this.scenario = scenario;
		}

		void explore(List<Integer> schedule) {
			World world = new World(this.scenario);
			for (int choice : schedule) {
				world.choose(choice);
			}
			world.violations
				.forEach((kind, detail) -> this.violations.putIfAbsent(kind, detail + " after " + world.log));
			if (!world.violations.isEmpty()) {
				return;
			}
			int left = this.scenario.depth() - schedule.size();
			if (left == 0 || world.stepsAfterDone > 2) {
				world.settle();
				world.violations
					.forEach((kind, detail) -> this.violations.putIfAbsent(kind, detail + " after " + world.log));
				this.schedules++;
				if (world.done != null) {
					this.endings.merge(world.done.phase(), 1, Integer::sum);
				}
				return;
			}
			Integer deeper = this.seen.get(world.signature());
			if (deeper != null && deeper >= left) {
				return;
			}
			this.seen.put(world.signature(), left);
			int choices = world.choices().size();
			for (int choice = 0; choice < choices; choice++) {
				schedule.add(choice);
				explore(schedule);
				schedule.remove(schedule.size() - 1);
			}
		}

	}

	/** A command on the caller's connection. */
	private record Command(boolean attempt, String owner, long entryMillis, boolean leave, long sentMillis,
			long untilMillis) {
	}

	/** The caller's world: the model storage, its connection, messages, the machine. */
	private static final class World {

		private static final String OTHER = "other";

		private final Scenario scenario;

		private final Acquisition machine;

		private final List<String> tokens = new ArrayList<>();

		final Map<String, String> violations = new LinkedHashMap<>();

		final List<String> log = new ArrayList<>();

		long now;

		// the storage: one key, its queue, its fencing counter
		String holder = OTHER;

		long expiry = Long.MAX_VALUE;

		long cap;

		long fence = 1;

		/** The fencing token the key was granted with. */
		long holderFence = 1;

		final Map<String, Long> queue = new LinkedHashMap<>();

		// the caller's connection: commands in order, the reply of the attempt that ran
		final ArrayDeque<Command> connection = new ArrayDeque<>();

		Acquisition.Event reply;

		boolean outstanding;

		boolean registering;

		boolean otherReleased;

		/** Whether a rival client took the key once while it was free. */
		boolean rivalTook;

		/** Whether the connection dropped once. */
		boolean dropped;

		/** Whether the caller was promoted behind the local holder. */
		boolean promotedBehind;

		/**
		 * The owner token the local holder's release handed the lock to, or {@code null}.
		 */
		String handedHere;

		/** Steps taken since the acquisition ended (late events are still explored). */
		int stepsAfterDone;

		// messages to the caller: hand-offs and release notifications (delivered twice
		// at most)
		final List<Acquisition.Event> messages = new ArrayList<>();

		final Map<Acquisition.Event, Integer> deliveries = new HashMap<>();

		Acquisition.Wait waiting;

		Acquisition.Done done;

		String taken;

		World(Scenario scenario) {
			this.scenario = scenario;
			this.machine = new Acquisition(
					new Acquisition.Terms(LockId.of("k"), ms(WAIT_MILLIS), scenario.grantedMillis(),
							(scenario.maxHoldMillis > 0) ? ms(scenario.maxHoldMillis) : Long.MAX_VALUE, true),
					new Acquisition.Inputs(() -> true, (lease) -> lease / 100 + 2_000_000L, () -> {
						String token = "t" + (this.tokens.size() + 1);
						this.tokens.add(token);
						return token;
					}, (max) -> max), WaitPolicy.DEFAULTS);
			apply(this.machine.start(0,
					new Acquisition.Gate((key) -> scenario.firstCaller, (key) -> scenario.hearsHandOffs)));
		}

		/** The choices open now, by name; {@link #choose} takes one by index. */
		List<String> choices() {
			List<String> choices = new ArrayList<>();
			if (!this.connection.isEmpty()) {
				choices.add("run");
			}
			if (this.outstanding) {
				boolean queued = this.connection.stream().anyMatch(Command::attempt);
				if (queued) {
					choices.add("fail, runs later");
					choices.add("fail, never runs");
				}
				else if (this.reply != null) {
					choices.add("fail, reply lost");
				}
			}
			if (this.reply != null) {
				choices.add("reply");
			}
			if (this.registering) {
				choices.add("registered");
			}
			if (!this.otherReleased && OTHER.equals(this.holder)) {
				choices.add("other releases");
				if (this.scenario.localHolder && this.queue.isEmpty()) {
					choices.add("other hands to it");
				}
			}
			if (this.scenario.localHolder && !this.promotedBehind) {
				choices.add("promoted behind");
			}
			if (!this.rivalTook && heldBy() == null) {
				choices.add("rival takes");
			}
			if (!this.dropped && (!this.connection.isEmpty() || this.outstanding)) {
				choices.add("connection drops");
			}
			for (int i = 0; i < this.messages.size(); i++) {
				// what a local release tells comes once (its reply is read once)
				Acquisition.Event message = this.messages.get(i);
				boolean once = message instanceof Acquisition.HandedOffHere || message instanceof Acquisition.Promoted;
				if (this.deliveries.getOrDefault(message, 0) < (once ? 1 : 2)) {
					choices.add("message " + i);
				}
			}
			if (this.waiting != null) {
				choices.add("timer");
			}
			choices.add("tick");
			choices.add("abort");
			return choices;
		}

		void choose(int index) {
			String choice = choices().get(index);
			this.log.add(choice + "@" + this.now);
			if (this.done != null) {
				this.stepsAfterDone++;
			}
			switch (choice) {
				case "run" -> run();
				case "fail, runs later" -> failed(false);
				case "fail, never runs" -> {
					this.connection.removeLastOccurrence(lastAttempt());
					failed(false);
				}
				case "fail, reply lost" -> failed(true);
				case "reply" -> {
					Acquisition.Event event = this.reply;
					this.reply = null;
					this.outstanding = false;
					feed(event);
				}
				case "registered" -> {
					this.registering = false;
					// behind a local holder: the head of the waiters only once promoted
					feed(new Acquisition.Registered(!this.scenario.localHolder));
				}
				case "other releases" -> {
					this.otherReleased = true;
					release(OTHER);
					if (this.scenario.localHolder) {
						// a local holder's release that did not hand the lock to its
						// successor promotes it
						this.messages.add(new Acquisition.Promoted());
					}
				}
				case "other hands to it" -> handHere();
				case "promoted behind" -> {
					this.promotedBehind = true;
					feed(new Acquisition.PromotedBehind());
				}
				case "timer" -> {
					this.now = Math.max(this.now, TimeUnit.NANOSECONDS.toMillis(this.waiting.untilNanos()) + 1);
					feed(new Acquisition.TimerFired(this.waiting.timer()));
				}
				case "rival takes" -> {
					this.rivalTook = true;
					this.holder = "rival";
					this.fence++;
					this.holderFence = this.fence;
					this.expiry = this.now + 1000;
					this.cap = 0;
				}
				case "connection drops" -> drop();
				case "tick" -> this.now += TICK_MILLIS;
				case "abort" -> feed(new Acquisition.Aborted(new LockException("cancelled")));
				default -> {
					Acquisition.Event message = this.messages.get(Integer.parseInt(choice.substring(8)));
					this.deliveries.merge(message, 1, Integer::sum);
					feed(message);
				}
			}
		}

		/**
		 * The local holder's release hands the lock to the caller's owner token (its
		 * local queues name it), told to it after the reply; a caller that ended without
		 * the lock meanwhile gives it back (the local queues see it left).
		 */
		private void handHere() {
			this.otherReleased = true;
			String token = this.machine.owner();
			long lease = this.scenario.grantedMillis();
			this.holder = token;
			this.fence++;
			this.holderFence = this.fence;
			this.expiry = this.now + lease;
			this.cap = 0;
			this.handedHere = token;
			this.messages.add(new Acquisition.HandedOffHere(token, this.fence, lease, ms(this.now)));
			if (this.done != null) {
				giveBackHandedHere();
			}
		}

		/** A caller that ended without what a local release handed it gives it back. */
		private void giveBackHandedHere() {
			if (this.handedHere != null && this.done.phase() != Acquisition.Phase.ACQUIRED) {
				this.connection.add(new Command(false, this.handedHere, 0, true, this.now,
						this.now + this.scenario.grantedMillis()));
			}
		}

		/**
		 * The connection drops: it loses every command it had not written, and the reply
		 * it had not delivered. An attempt among them never runs; an undo among them is
		 * sent again on the new connection while it is to be retried (its
		 * {@code untilNanos}); the attempt on its way fails.
		 */
		private void drop() {
			this.dropped = true;
			List<Command> lost = List.copyOf(this.connection);
			this.connection.clear();
			for (Command command : lost) {
				if (!command.attempt() && this.now < command.untilMillis()) {
					this.connection.add(command);
				}
			}
			if (this.outstanding) {
				failed(true);
			}
		}

		/**
		 * At the end of a schedule that ended the acquisition: the connection runs what
		 * was sent; then nothing is left under an old token.
		 */
		void settle() {
			if (this.done == null) {
				return;
			}
			while (!this.connection.isEmpty()) {
				run();
			}
			for (String token : this.tokens) {
				if (!token.equals(this.taken) && (token.equals(heldBy()) || this.queue.containsKey(token))) {
					violation("left behind", token + " holds or queues after " + this.done.phase());
				}
			}
		}

		private Command lastAttempt() {
			Command last = null;
			for (Command command : this.connection) {
				last = command.attempt() ? command : last;
			}
			return last;
		}

		private void failed(boolean replyLost) {
			if (replyLost) {
				this.reply = null;
			}
			this.outstanding = false;
			boolean running = this.done == null;
			LockException failure = new LockException("timed out");
			feed(new Acquisition.AttemptFailed(failure));
			// only a lock held by another owner is worth waiting for
			if (running && (this.done == null || this.done.phase() != Acquisition.Phase.FAILED
					|| this.done.failure().getCause() != failure)) {
				violation("a failed attempt that did not end the acquisition with its failure",
						String.valueOf(this.done));
			}
		}

		private void feed(Acquisition.Event event) {
			apply(this.machine.on(event, ms(this.now)));
		}

		private void apply(List<Acquisition.Effect> effects) {
			if (effects.stream().filter(Acquisition.Effect::isAction).count() > 1) {
				violation("an answer with more than one action", effects.toString());
			}
			effects.forEach(this::apply);
		}

		private void apply(Acquisition.Effect action) {
			if (action instanceof Acquisition.Undo undo) {
				if (this.taken != null && undo.owner().equals(this.taken)) {
					violation("undo of a lease taken", undo.toString());
				}
				this.connection.add(new Command(false, undo.owner(), 0, undo.leave(), this.now,
						TimeUnit.NANOSECONDS.toMillis(undo.untilNanos())));
			}
			else if (action instanceof Acquisition.Send send) {
				this.connection.add(new Command(true, send.owner(), send.entryMillis(), false, this.now, 0));
				this.outstanding = true;
				this.waiting = null;
			}
			else if (action instanceof Acquisition.Register) {
				this.registering = true;
				this.waiting = null;
			}
			else if (action instanceof Acquisition.Wait wait) {
				if (wait.untilNanos() > ms(WAIT_MILLIS)) {
					violation("a wait past the deadline", wait.toString());
				}
				this.waiting = wait;
			}
			else if (action instanceof Acquisition.Done ending) {
				if (this.done != null) {
					violation("ended twice", this.done + " then " + ending);
				}
				this.done = ending;
				this.waiting = null;
				ended(ending);
				giveBackHandedHere();
			}
		}

		private void ended(Acquisition.Done ending) {
			if (ending.phase() == Acquisition.Phase.ACQUIRED) {
				Acquisition.Grant grant = ending.grant();
				this.taken = grant.owner();
				long deadline = TimeUnit.NANOSECONDS
					.toMillis(grant.sentNanos() + grant.grantedNanos() - (grant.grantedNanos() / 100 + 2_000_000L));
				if (!grant.owner().equals(this.machine.owner())) {
					violation("a grant of another owner token",
							grant.owner() + " but asks with " + this.machine.owner());
				}
				if (!grant.owner().equals(heldBy())) {
					violation("entered without the lock", grant.owner() + " while the storage has " + heldBy());
				}
				else if (deadline > this.expiry) {
					violation("a local deadline after the key's expiry", deadline + " > " + this.expiry);
				}
				if (deadline <= this.now) {
					violation("a lease lost on arrival", "deadline " + deadline + " at " + this.now);
				}
				if (this.connection.stream()
					.anyMatch((command) -> !command.attempt() && command.owner().equals(grant.owner()))) {
					violation("an undo of the lease on its way", this.connection.toString());
				}
			}
		}

		private void run() {
			Command command = this.connection.poll();
			if (!command.attempt()) {
				this.queue.remove(command.owner());
				if (command.owner().equals(heldBy())) {
					release(command.owner());
				}
				return;
			}
			Acquisition.Event answer = acquire(command);
			if (this.outstanding && this.connection.stream().noneMatch(Command::attempt)) {
				this.reply = answer;
			}
		}

		/** acquire.lua on the model. */
		private Acquisition.Event acquire(Command command) {
			long granted = this.scenario.grantedMillis();
			this.fence++;
			if (heldBy() == null) {
				this.holder = command.owner();
				this.holderFence = this.fence;
				this.expiry = this.now + granted;
				this.cap = (this.scenario.maxHoldMillis > 0) ? this.now + this.scenario.maxHoldMillis : 0;
				this.queue.remove(command.owner());
				return new Acquisition.Granted(new long[] { this.holderFence }, -1);
			}
			if (heldBy().equals(command.owner())) {
				long ttl = (this.cap > 0) ? Math.min(granted, this.cap - this.now) : granted;
				if (ttl > 0) {
					this.expiry = this.now + ttl;
				}
				this.queue.remove(command.owner());
				return new Acquisition.Granted(new long[] { this.holderFence }, this.expiry - this.now);
			}
			if (command.entryMillis() > 0) {
				this.queue.putIfAbsent(command.owner(), 0L);
				this.queue.put(command.owner(), this.now + command.entryMillis());
			}
			return new Acquisition.Held(this.expiry - this.now, 0, this.fence);
		}

		/** release.lua on the model: hands off to the first live queued owner. */
		private void release(String owner) {
			for (Map.Entry<String, Long> entry : List.copyOf(this.queue.entrySet())) {
				this.queue.remove(entry.getKey());
				if (entry.getValue() > this.now) {
					this.holder = entry.getKey();
					this.fence++;
					this.holderFence = this.fence;
					long lease = this.scenario.grantedMillis();
					this.expiry = this.now + lease;
					this.cap = (this.scenario.maxHoldMillis > 0) ? this.now + this.scenario.maxHoldMillis : 0;
					this.messages.add(new Acquisition.HandedOff(entry.getKey(), this.fence, lease));
					return;
				}
			}
			this.holder = null;
			this.messages.add(new Acquisition.Released());
		}

		private String heldBy() {
			return (this.holder != null && this.now < this.expiry) ? this.holder : null;
		}

		private void violation(String kind, String detail) {
			this.violations.putIfAbsent(this.scenario + ": " + kind, detail);
		}

		/**
		 * The world and the machine's fields: equal signatures behave alike from here.
		 */
		String signature() {
			StringBuilder signature = new StringBuilder();
			signature.append(this.now)
				.append(heldBy())
				.append(this.expiry)
				.append(this.cap)
				.append(this.fence)
				.append(this.holderFence)
				.append(this.queue)
				.append(this.connection)
				.append(describe(this.reply))
				.append(this.outstanding)
				.append(this.registering)
				.append(this.otherReleased)
				.append(this.rivalTook)
				.append(this.dropped)
				.append(this.promotedBehind)
				.append(this.handedHere)
				.append(this.stepsAfterDone)
				.append(this.done)
				.append(this.messages)
				.append(this.deliveries)
				.append(this.waiting);
			for (Field field : Acquisition.class.getDeclaredFields()) {
				if (!java.lang.reflect.Modifier.isStatic(field.getModifiers()) && !field.getName().equals("terms")
						&& !field.getName().equals("now")) {
					field.setAccessible(true);
					try {
						signature.append(field.getName())
							.append('=')
							.append(describe(field.get(this.machine)))
							.append(';');
					}
					catch (IllegalAccessException ex) {
						throw new IllegalStateException(ex);
					}
				}
			}
			return signature.toString();
		}

		private static String describe(Object value) {
			return (value instanceof Acquisition.Granted granted)
					? "Granted" + Arrays.toString(granted.fencingTokens()) + granted.grantedMillis()
					: String.valueOf(value);
		}

		private static long ms(long millis) {
			return TimeUnit.MILLISECONDS.toNanos(millis);
		}

	}

}
