package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The local bookkeeping of {@link LocalQueues} that needs no storage: a hand-off told
 * before its waiter registered (a caller that queued with its first attempt registers
 * after the reply) is the waiter's once it registers, and only that owner's; hand-offs
 * follow the waiter's current owner token; each kind of waiter (one-key hand-off, other)
 * has its own head; a woken waiter that leaves passes the wake-up on.
 */
class LocalQueuesTests {

	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

	private final LocalQueues waiters = new LocalQueues(new OpenWakeUps(), this.scheduler, WaitPolicy.DEFAULTS.local());

	@AfterEach
	void close() {
		this.waiters.close();
		this.scheduler.shutdownNow();
	}

	/**
	 * The wait policy's local keeping sets how long a key's subscription lingers after
	 * its last waiter and how long an unclaimed hand-off waits for its waiter: shortened
	 * here, both end within the test, where the defaults (5 s, 30 s) would not.
	 */
	@Test
	void theWaitPolicySetsHowLongAKeyLingersAndAnUnclaimedHandOffIsKept() {
		List<String> unlistened = new CopyOnWriteArrayList<>();
		OpenWakeUps recording = new OpenWakeUps() {
			@Override
			public void unlisten(String key) {
				unlistened.add(key);
			}
		};
		LocalQueues brief = new LocalQueues(recording, this.scheduler,
				new WaitPolicy.LocalKeeping(Duration.ofMillis(50), Duration.ofMillis(50)));
		try {
			brief.handedOff("lockstep:other", "owner-2", 9, 1_000);
			long left = System.nanoTime();
			brief.unregister(brief.register("lockstep:job", "owner-1", false, new Heard()), false);
			await().atMost(Duration.ofSeconds(3)).until(() -> unlistened.contains("lockstep:job"));
			long lingeredMillis = (System.nanoTime() - left) / 1_000_000;
			assertThat(lingeredMillis).as("lingered less than the default 5 s").isLessThan(4_000);
			// the linger took longer than the unclaimed hand-off's 50 ms: the next kept
			// hand-off forgets it
			brief.handedOff("lockstep:third", "owner-3", 10, 1_000);
			Heard late = new Heard();
			brief.register("lockstep:other", "owner-2", true, late);
			assertThat(late.events).as("a hand-off older than its keeping is forgotten").isEmpty();
		}
		finally {
			brief.close();
		}
	}

	@Test
	void aHandOffThatCameBeforeItsWaiterRegisteredIsTheWaitersOnceItRegisters() {
		this.waiters.handedOff("lockstep:job", "owner-1", 42, 30_000);
		Heard heard = new Heard();
		LocalQueues.Waiter waiter = this.waiters.register("lockstep:job", "owner-1", true, heard);
		assertThat(heard.events).containsExactly("handed off to owner-1: 42, 30000 ms");
		// claimed once: a later waiter with the same token (never issued twice) gets none
		this.waiters.unregister(waiter, true);
		Heard later = new Heard();
		this.waiters.register("lockstep:job", "owner-1", true, later);
		assertThat(later.events).isEmpty();
	}

	@Test
	void anEarlyHandOffIsClaimedOnlyByItsOwnerForItsKey() {
		this.waiters.handedOff("lockstep:job", "owner-1", 42, 30_000);
		Heard other = new Heard();
		this.waiters.register("lockstep:job", "owner-2", true, other);
		this.waiters.registerAsync("lockstep:other", "owner-1", true, other);
		assertThat(other.events).isEmpty();
		Heard own = new Heard();
		this.waiters.registerAsync("lockstep:job", "owner-1", true, own);
		assertThat(own.events).containsExactly("handed off to owner-1: 42, 30000 ms");
	}

	@Test
	void aHandOffGoesOnlyToTheWaiterThatAsksWithItsOwnerToken() {
		Heard heard = new Heard();
		this.waiters.register("lockstep:job", "owner-2", true, heard);
		this.waiters.handedOff("lockstep:job", "owner-1", 7, 1_000);
		assertThat(heard.events).isEmpty();
		this.waiters.handedOff("lockstep:job", "owner-2", 8, 1_000);
		assertThat(heard.events).containsExactly("handed off to owner-2: 8, 1000 ms");
	}

	@Test
	void aOneKeyWaiterBehindAMultiKeyWaiterOfTheSameKeyIsTheHeadOfItsKind() {
		Heard multi = new Heard();
		Heard single = new Heard();
		Heard second = new Heard();
		LocalQueues.Waiter first = this.waiters.register("lockstep:job", "owner-1", false, multi);
		LocalQueues.Waiter one = this.waiters.register("lockstep:job", "owner-2", true, single);
		LocalQueues.Waiter two = this.waiters.register("lockstep:job", "owner-3", true, second);
		assertThat(this.waiters.isHead(first)).isTrue();
		assertThat(this.waiters.isHead(one)).as("the first one-key waiter, behind a multi-key one").isTrue();
		assertThat(this.waiters.isHead(two)).isFalse();
		this.waiters.unregister(one, true);
		assertThat(second.events).containsExactly("promoted");
		assertThat(multi.events).isEmpty();
	}

	@Test
	void aWokenWaiterThatLeavesWithoutTheLockPassesTheWakeUpOn() {
		Heard first = new Heard();
		Heard second = new Heard();
		LocalQueues.Waiter head = this.waiters.register("lockstep:job", "owner-1", false, first);
		this.waiters.register("lockstep:job", "owner-2", false, second);
		this.waiters.released("lockstep:job");
		assertThat(first.events).containsExactly("released");
		this.waiters.unregister(head, false);
		assertThat(second.events).containsExactly("promoted");
	}

	/**
	 * A release that can wake no local waiter (the key has none, or only waiters that a
	 * hand-off tells, while hand-offs are heard) does not wait for the queues' monitor:
	 * the releasing caller returns while another thread holds it, here a hand-off
	 * listener that has not returned yet.
	 */
	@Test
	void aReleaseThatCanWakeNoOneDoesNotWaitForTheQueuesMonitor() throws Exception {
		CountDownLatch inside = new CountDownLatch(1);
		CountDownLatch leave = new CountDownLatch(1);
		Heard busy = new Heard() {
			@Override
			public void handedOff(String owner, long fencingToken, long leaseMillis) {
				inside.countDown();
				try {
					leave.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		this.waiters.register("lockstep:busy", "owner-1", true, busy);
		Heard handedOffOnly = new Heard();
		this.waiters.register("lockstep:job", "owner-2", true, handedOffOnly);
		Thread holder = new Thread(() -> this.waiters.handedOff("lockstep:busy", "owner-1", 1, 1_000));
		holder.start();
		try {
			assertThat(inside.await(10, TimeUnit.SECONDS)).as("the listener holds the monitor").isTrue();
			CompletableFuture<Void> releases = CompletableFuture.runAsync(() -> {
				this.waiters.released("lockstep:job");
				this.waiters.released("lockstep:none");
			});
			assertThat(releases).as("releases returned while the monitor is held")
				.succeedsWithin(Duration.ofSeconds(10));
		}
		finally {
			leave.countDown();
			holder.join(10_000);
		}
		assertThat(handedOffOnly.events).as("a hand-off waiter is not woken by a release").isEmpty();
	}

	/** What a waiter heard, in order. */
	/**
	 * A waiter that becomes the head because the one before it acquired is promoted
	 * behind that holder, named once by its release, and told once: handed the lock (then
	 * it gives back what it leaves without), or not (then it asks).
	 */
	@Test
	void aWaiterPromotedBehindALocalHolderIsNamedOnceByItsReleaseAndToldOnce() {
		LocalQueues queues = new LocalQueues(new OpenWakeUps(), this.scheduler, WaitPolicy.DEFAULTS.local(), true);
		try {
			List<String> givenBack = new CopyOnWriteArrayList<>();
			Successive first = new Successive();
			Successive second = new Successive();
			Successive third = new Successive();
			LocalQueues.Waiter one = queues.register("lockstep:job", "owner-1", true, first);
			LocalQueues.Waiter two = queues.register("lockstep:job", "owner-2", true, second);
			queues.register("lockstep:job", "owner-3", true, third);
			assertThat(queues.successor("lockstep:job", 0, (named) -> givenBack.add(named.owner())))
				.as("no one behind a holder yet")
				.isNull();
			assertThat(queues.unregister(one, true)).isFalse();
			assertThat(second.events).containsExactly("promoted behind");
			LocalQueues.Naming naming = queues.successor("lockstep:job", 5, (named) -> givenBack.add(named.owner()));
			assertThat(naming.successor().owner()).isEqualTo("owner-2");
			assertThat(naming.successor().leaseMillis()).isEqualTo(5_000);
			assertThat(queues.successor("lockstep:job", 6, (named) -> givenBack.add(named.owner()))).as("named once")
				.isNull();
			naming.successor().handed().accept(9);
			naming.notHanded();
			assertThat(second.events).containsExactly("promoted behind",
					"handed here to owner-2: 9, 5000 ms, sent at 5");
			assertThat(queues.unregister(two, false)).as("it gives back what it leaves without").isTrue();
			assertThat(third.events).as("its follower asks").containsExactly("promoted");
			assertThat(givenBack).isEmpty();
		}
		finally {
			queues.close();
		}
	}

	/**
	 * A successor that left before the release's reply is given back what it was handed;
	 * one the release did not hand the lock to asks; one of a release that failed or was
	 * not answered (it may have handed the lock) asks, and gives back what it may hold
	 * when it leaves without the lock, or at once when it had left already.
	 */
	@Test
	void eachOutcomeOfANamingIsResolvedOnce() {
		LocalQueues queues = new LocalQueues(new OpenWakeUps(), this.scheduler, WaitPolicy.DEFAULTS.local(), true);
		try {
			List<String> givenBack = new CopyOnWriteArrayList<>();
			Successive[] heard = { new Successive(), new Successive(), new Successive(), new Successive(),
					new Successive(), new Successive(), new Successive() };
			List<LocalQueues.Waiter> waiters = registered(queues, heard);
			queues.unregister(waiters.get(0), true);
			LocalQueues.Naming left = queues.successor("lockstep:job", 5, (named) -> givenBack.add(named.owner()));
			assertThat(queues.unregister(waiters.get(1), false)).as("not handed yet").isFalse();
			left.successor().handed().accept(9);
			assertThat(givenBack).containsExactly("owner-1");
			assertThat(heard[1].events).containsExactly("promoted behind");
			// the next asks at once (its predecessor left without the lock)
			assertThat(heard[2].events).containsExactly("promoted");
			queues.unregister(waiters.get(2), true);
			LocalQueues.Naming notHanded = queues.successor("lockstep:job", 7, (named) -> givenBack.add(named.owner()));
			notHanded.notHanded();
			notHanded.successor().handed().accept(11);
			assertThat(heard[3].events).as("asks; a hand-off told after that changes nothing")
				.containsExactly("promoted behind", "promoted");
			assertThat(givenBack).containsExactly("owner-1");
			queues.unregister(waiters.get(3), true);
			queues.successor("lockstep:job", 9, (named) -> givenBack.add(named.owner())).failed();
			assertThat(heard[4].events).containsExactly("promoted behind", "promoted");
			assertThat(queues.unregister(waiters.get(4), false)).as("gives back what it may hold").isTrue();
			queues.unregister(waiters.get(5), true);
			LocalQueues.Naming gone = queues.successor("lockstep:job", 11, (named) -> givenBack.add(named.owner()));
			queues.unregister(waiters.get(6), false);
			gone.failed();
			assertThat(givenBack).containsExactly("owner-1", "owner-6");
		}
		finally {
			queues.close();
		}
	}

	@Test
	void aHolderThatLeavesWithoutNamingASuccessorMakesTheHeadBehindItAsk() {
		LocalQueues queues = new LocalQueues(new OpenWakeUps(), this.scheduler, WaitPolicy.DEFAULTS.local(), true);
		try {
			Successive second = new Successive();
			LocalQueues.Waiter one = queues.register("lockstep:job", "owner-1", true, new Successive());
			queues.register("lockstep:job", "owner-2", true, second);
			queues.unregister(one, true);
			queues.holderLeft("lockstep:job");
			assertThat(second.events).containsExactly("promoted behind", "promoted");
			assertThat(queues.successor("lockstep:job", 5, (named) -> {
			})).as("no longer behind a holder").isNull();
		}
		finally {
			queues.close();
		}
	}

	/** Registers the waiters of one key, owner-0, owner-1 and so on, in that order. */
	private static List<LocalQueues.Waiter> registered(LocalQueues queues, Successive... heard) {
		List<LocalQueues.Waiter> waiters = new ArrayList<>();
		for (int i = 0; i < heard.length; i++) {
			waiters.add(queues.register("lockstep:job", "owner-" + i, true, heard[i]));
		}
		return waiters;
	}

	/**
	 * A one-key exclusive waiter: its release names a successor, and it may be named one
	 * (a 5 s hand-off lease).
	 */
	private static final class Successive extends Heard {

		@Override
		public void promotedBehind() {
			this.events.add("promoted behind");
		}

		@Override
		public long successorLease() {
			return 5_000;
		}

		@Override
		public boolean namesSuccessor() {
			return true;
		}

		@Override
		public void handedOffHere(String owner, long fencingToken, long leaseMillis, long sentNanos) {
			this.events.add(
					"handed here to " + owner + ": " + fencingToken + ", " + leaseMillis + " ms, sent at " + sentNanos);
		}

	}

	private static class Heard implements LocalQueues.Listener {

		final List<String> events = new ArrayList<>();

		@Override
		public void released() {
			this.events.add("released");
		}

		@Override
		public void promoted() {
			this.events.add("promoted");
		}

		@Override
		public void handedOff(String owner, long fencingToken, long leaseMillis) {
			this.events.add("handed off to " + owner + ": " + fencingToken + ", " + leaseMillis + " ms");
		}

		@Override
		public void closed() {
			this.events.add("closed");
		}

	}

}
