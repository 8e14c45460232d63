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
	private static class Heard implements LocalQueues.Listener {

		private final List<String> events = new ArrayList<>();

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
