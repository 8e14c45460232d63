package io.lockstep.faults;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import io.lockstep.LockLostListener;
import io.lockstep.LockTemplate;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;

/**
 * One fault against one holder and one contender, measured the same way for every fault:
 * <ol>
 * <li>the holder acquires the lock and writes to the fenced register with its token;</li>
 * <li>the fault is injected, and a contender starts to acquire the same lock;</li>
 * <li>when the contender gets it, the checker notes whether the holder still believed it
 * held the lock (an overlap) and whether the contender's token is the holder's (a
 * duplicate; a lower one fails the run), and the contender writes with its token;</li>
 * <li>the fault is healed; the holder, unaware of what happened meanwhile (as after a
 * pause), writes once more with its token (a stale write if the contender wrote first)
 * and releases;</li>
 * <li>the lock keys left in Redis are counted.</li>
 * </ol>
 */
final class Scenario {

	private final String fault;

	private final Ledger ledger;

	private final String key;

	private final AtomicLong lostAt = new AtomicLong();

	private Duration contenderWait = Duration.ofSeconds(20);

	private Duration awaitContender = Duration.ofMillis(300);

	private List<RedisNode> lockNodes = List.of();

	Scenario(String fault, Ledger ledger, String key) {
		this.fault = fault;
		this.ledger = ledger;
		this.key = key;
	}

	/** The listener the holder's template must report lease losses to. */
	LockLostListener lossListener() {
		return (event) -> this.lostAt.compareAndSet(0, System.nanoTime());
	}

	/**
	 * How long the holder, once the fault is healed, waits for the contender's write
	 * before its own late write: short where the holder is expected to keep its lease,
	 * long where the fault takes it away.
	 */
	Scenario awaitContender(Duration awaitContender) {
		this.awaitContender = awaitContender;
		return this;
	}

	/** How long the contender tries to acquire. */
	Scenario contenderWait(Duration contenderWait) {
		this.contenderWait = contenderWait;
		return this;
	}

	/** The Redis nodes whose lock keys are counted at the end. */
	Scenario lockNodes(List<RedisNode> lockNodes) {
		this.lockNodes = lockNodes;
		return this;
	}

	Figures run(Protection protection, LockTemplate holderLocks, LockTemplate contenderLocks, Fault fault)
			throws Exception {
		Protection.Held holder = protection.acquire(holderLocks, this.key, Duration.ofSeconds(10));
		if (!this.ledger.write(this.key, holder.token(), "holder", protection.fenced())) {
			throw new IllegalStateException("the holder's first write was refused");
		}
		this.lostAt.set(0);
		long start = System.nanoTime();
		fault.inject();
		CompletableFuture<long[]> contender = CompletableFuture.supplyAsync(() -> {
			Protection.Held next = protection.acquire(contenderLocks, this.key, this.contenderWait);
			long acquiredAt = System.nanoTime();
			long overlap = holder.isHeld() ? 1 : 0;
			boolean written = this.ledger.write(this.key, next.token(), "contender", protection.fenced());
			if (next.token() < holder.token()) {
				// the storage's order disagrees with the lock's
				throw new AssertionError("the next owner's fencing token " + next.token()
						+ " is lower than the previous owner's " + holder.token() + " (written: " + written + ")");
			}
			next.close();
			return new long[] { acquiredAt, overlap, (next.token() == holder.token()) ? 1 : 0 };
		});
		fault.heal();
		try {
			contender.get(this.awaitContender.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			// the holder kept the lock: the contender gets it after the release below
		}
		this.ledger.write(this.key, holder.token(), "holder", protection.fenced());
		if (holder.close()) {
			// a loss found at release is told to the listeners on their own thread
			Eventually.holds(Duration.ofSeconds(2), () -> this.lostAt.get() != 0);
		}
		long[] contended = contender.get(this.contenderWait.toMillis() + 5_000, TimeUnit.MILLISECONDS);
		long lost = this.lostAt.get();
		return new Figures(this.fault, protection.label(), contended[1], 0, this.ledger.staleAccepted(this.key),
				(lost != 0) ? (lost - start) / 1_000_000 : -1, (contended[0] - start) / 1_000_000, keysLeft(),
				contended[2])
			.report();
	}

	/**
	 * Lock keys (not fencing counters) left on the running lock nodes once a lease has
	 * passed.
	 */
	long keysLeft() {
		return countKeysAfterALease(this.lockNodes);
	}

	/** Lock keys left once the lease of a dead or paused holder could have passed. */
	static long countKeysAfterALease(List<RedisNode> nodes) {
		long[] left = new long[1];
		Eventually.holds(Duration.ofSeconds(3), () -> {
			left[0] = countKeys(nodes);
			return left[0] == 0;
		});
		if (left[0] != 0) {
			System.out.println("lock keys left: " + describeKeys(nodes));
		}
		return left[0];
	}

	/** Each lock key left on the running nodes, with its value and remaining lease. */
	static String describeKeys(List<RedisNode> nodes) {
		StringBuilder described = new StringBuilder();
		lockKeys(nodes, (node, key) -> {
			Object type = node.call("TYPE", key);
			described.append(String.format("%n  %s on %d: type %s, pttl %s, %s", key, node.port(), type,
					node.call("PTTL", key), "string".equals(String.valueOf(type)) ? node.call("GET", key) : ""));
		});
		return described.toString();
	}

	static long countKeys(List<RedisNode> nodes) {
		long[] count = new long[1];
		lockKeys(nodes, (node, key) -> count[0]++);
		return count[0];
	}

	/** Visits the lock keys (not fencing counters) on the running nodes. */
	private static void lockKeys(List<RedisNode> nodes, BiConsumer<RedisNode, String> visitor) {
		for (RedisNode node : nodes) {
			if (node.isRunning()) {
				try {
					@SuppressWarnings("unchecked")
					List<Object> keys = (List<Object>) node.call("KEYS", "lockstep:*");
					for (Object key : keys) {
						if (!((String) key).endsWith("__fence")) {
							visitor.accept(node, (String) key);
						}
					}
				}
				catch (RuntimeException ex) {
					// a replica or a node that is still starting: nothing to count there
				}
			}
		}
	}

	/** A fault: injected before the contender starts, healed (blocking) after. */
	interface Fault {

		void inject() throws Exception;

		void heal() throws Exception;

		static Fault of(ThrowingRunnable inject, Duration lasting, ThrowingRunnable heal) {
			return new Fault() {

				@Override
				public void inject() throws Exception {
					inject.run();
				}

				@Override
				public void heal() throws Exception {
					TimeUnit.MILLISECONDS.sleep(lasting.toMillis()); // the fault's
																		// duration
					heal.run();
				}

			};
		}

	}

	interface ThrowingRunnable {

		void run() throws Exception;

	}

}
