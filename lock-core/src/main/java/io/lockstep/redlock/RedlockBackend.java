package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.engine.LockBackend;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.redis.LockCommands;

/**
 * Redlock over N independent Redis masters (N ≥ 3, quorum N/2+1), each with its own lock
 * connection and notification connection. Every command goes to every node at once, each
 * bounded by the node timeout; the outcome is decided as soon as the replies so far
 * decide it. An acquire also waits, up to {@link Nodes#CONNECT_TIMEOUT}, for nodes that
 * are not connected yet (as the single-master backend's first command waits for its
 * connection), unless a quorum answers sooner.
 *
 * <ul>
 * <li><b>Acquire</b>: the same owner token and lease on every node. Acquired only when a
 * quorum granted it, the fencing counters of a quorum were raised to the lock's token
 * (see below), and the validity time {@code lease - elapsed - drift} (drift = lease × the
 * clock-drift factor + 2 ms, elapsed measured from before the first command) is still
 * positive. The engine's local deadline is its send time (a moment before this backend's
 * start) + lease − the same drift: exactly Redlock's validity end, never later. On any
 * failure the lock is released on every node, also those that did not answer. A single
 * owner holding a quorum makes the attempt "held" until that quorum's lease runs out; a
 * split vote, a validity that ran out or a failed fence makes it "held" for a random
 * retry delay of up to {@value Acquisitions#MAX_RETRY_DELAY_MILLIS} ms; fewer than a
 * quorum of nodes answering throws a {@link LockException} naming each node's
 * failure.</li>
 * <li><b>Renew</b> on every node: renewed only when a quorum confirms, for the smallest
 * lease that quorum granted; lost when so many nodes report the key gone that no quorum
 * holds it; otherwise a failure (the engine retries, and declares the lease lost at its
 * local deadline).</li>
 * <li><b>Release</b> on every node: it proves ownership when a quorum deleted the keys.
 * <b>Check</b> and the remaining lease: on a quorum.</li>
 * <li><b>Fencing</b>: each node issues its own token ({@code max(counter + 1, µs)}); the
 * lock's token is the highest among the nodes that granted it, and before the lock is
 * reported acquired that token is written back to the counters of a quorum of nodes that
 * still hold the key ({@code raise-fence.lua}). Any later grant needs a quorum, which
 * shares a node with that one, where the counter is now above the token.</li>
 * <li><b>Restart rule</b>: a node whose {@code INFO persistence} does not say
 * {@code aof_enabled:1} refuses to vote, checked atomically inside every acquire, so a
 * node that restarts empty never grants a lock that a quorum still holds. The nodes are
 * also asked when they first answer (a node that does not persist is logged at ERROR at
 * start-up) and by every {@link #ping}, which fails while fewer than a quorum
 * persist.</li>
 * </ul>
 */
final class RedlockBackend implements LockBackend {

	private final Nodes nodes;

	private final int quorum;

	private final Redlock.Settings settings;

	private final Acquisitions acquisitions;

	private final Notifications notifications;

	private final Runnable shutdown;

	/**
	 * @param shutdown shuts down the clients this backend created (never given ones)
	 */
	RedlockBackend(List<String> names, List<? extends AbstractRedisClient> clients, Duration commandTimeout,
			String keyPrefix, Redlock.Settings settings, Runnable shutdown) {
		this.nodes = new Nodes(names, clients, commandTimeout, settings.nodeTimeout());
		this.quorum = this.nodes.quorum();
		this.settings = settings;
		this.acquisitions = new Acquisitions(this.nodes, keyPrefix + "__fence", settings, this::driftNanos);
		this.notifications = new Notifications(this.nodes);
		this.shutdown = shutdown;
		// in the background: the first lock need not wait for it, and start-up never does
		this.nodes.connect(settings.requirePersistence());
	}

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
		return this.acquisitions.attempt(id, owner, leaseMillis, maxHoldMillis);
	}

	// --- renew
	// -----------------------------------------------------------------------------

	@Override
	public CompletableFuture<long[]> renew(List<Renewal> renewals) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>();
		for (Renewal renewal : renewals) {
			for (String key : renewal.id().keys()) {
				keys.add(key);
				args.add(renewal.owner());
				args.add(Long.toString(renewal.leaseMillis()));
			}
		}
		long sent = System.nanoTime();
		List<CompletableFuture<long[]>> replies = this.nodes
			.each((node) -> node.<List<Long>>eval(LockCommands.RENEW, keys, args, false, this.nodes.nodeTimeout())
				.thenApply((granted) -> perRenewal(renewals, granted)));
		CompletableFuture<long[]> result = new CompletableFuture<>();
		Votes.gather(replies, (sofar) -> Renewals.decided(sofar, renewals.size(), this.quorum)).thenAccept((votes) -> {
			long[] granted = Renewals.outcome(votes, renewals.size(), this.quorum);
			if (granted != null) {
				result.complete(granted);
				return;
			}
			LockException failure = new LockException(
					"Redlock renewal of " + renewals.size() + " lock(s) not confirmed by a quorum of " + this.quorum
							+ " nodes (" + this.nodes.failures(votes) + ")");
			// the watchdog retries at once: not more often than once a node timeout
			long wait = Math.max(0, this.nodes.nodeTimeout().toNanos() - (System.nanoTime() - sent));
			CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS)
				.execute(() -> result.completeExceptionally(failure));
		}).exceptionally((failure) -> {
			result.completeExceptionally(failure);
			return null;
		});
		return result;
	}

	/**
	 * A node's grant per renewal: the least over the renewal's keys (0 if any is gone).
	 */
	private static long[] perRenewal(List<Renewal> renewals, List<Long> replies) {
		long[] granted = new long[renewals.size()];
		int index = 0;
		for (int i = 0; i < granted.length; i++) {
			long least = Long.MAX_VALUE;
			for (int k = 0; k < renewals.get(i).id().size(); k++) {
				long reply = replies.get(index++);
				least = (reply == 0 || least == 0) ? 0 : Math.min(least, reply);
			}
			granted[i] = least;
		}
		return granted;
	}

	// --- release, check, remaining lease
	// ----------------------------------------------------

	/**
	 * Every node that deletes a key publishes the same release id, so that a waiter's
	 * engine is not woken once per node (see {@link Notifications}).
	 */
	@Override
	public int release(LockId id, String owner) {
		List<String> args = List.of(owner, Notifications.releaseId());
		return onQuorum(id, (node) -> node.eval(LockCommands.RELEASE, id.keys(), args, true, this.nodes.nodeTimeout()),
				"release '" + id.display() + "'");
	}

	/**
	 * Leaves the keys to expire when the minimum hold passes, on every node; counted like
	 * a release.
	 */
	@Override
	public int keep(LockId id, String owner, long ttlMillis) {
		List<String> args = List.of(owner, Long.toString(ttlMillis));
		return onQuorum(id, (node) -> node.eval(LockCommands.KEEP, id.keys(), args, true, this.nodes.nodeTimeout()),
				"keep '" + id.display() + "' until its minimum hold passes");
	}

	/** Undoes an attempt on every node (see {@link Acquisitions#undo}). */
	@Override
	public void releaseQuietly(LockId id, String owner) {
		this.acquisitions.undo(id, owner);
	}

	@Override
	public int check(LockId id, String owner) {
		return onQuorum(id,
				(node) -> node.eval(LockCommands.CHECK, id.keys(), List.of(owner), false, this.nodes.nodeTimeout()),
				"check '" + id.display() + "'");
	}

	/**
	 * Runs a command that counts the owner's keys on every node.
	 * @return all the keys when a quorum counted them all; fewer (the count a quorum
	 * reached) when so many nodes counted fewer that no quorum can count them all
	 * @throws LockException when too few nodes answered to tell
	 */
	private int onQuorum(LockId id, Function<Node, CompletableFuture<Long>> command, String what) {
		int size = id.size();
		Votes<Long> votes = this.nodes
			.await(Votes.gather(this.nodes.each(command), (sofar) -> allKeys(sofar, size) >= this.quorum
					|| fewerKeys(sofar, size) > this.nodes.size() - this.quorum), what);
		if (allKeys(votes, size) >= this.quorum) {
			return size;
		}
		if (fewerKeys(votes, size) > this.nodes.size() - this.quorum) {
			return (int) Votes.largest(answers(votes, (count) -> true), this.quorum, 0);
		}
		throw new LockException("Redlock could not " + what + " on a quorum of " + this.quorum + " of "
				+ this.nodes.size() + " nodes (" + this.nodes.failures(votes) + ")");
	}

	/**
	 * The remaining lease of a key a quorum has (the quorum-th longest), whoever holds it
	 * on each node; negative when so many nodes lack it that no quorum has it.
	 */
	@Override
	public long remainingLease(String key) {
		int others = this.nodes.size() - this.quorum;
		Votes<Long> votes = this.nodes
			.await(Votes.gather(this.nodes.each((node) -> node.pttl(key, this.nodes.nodeTimeout())),
					(sofar) -> sofar.count((ttl) -> ttl >= 0) >= this.quorum || sofar.count((ttl) -> ttl < 0) > others),
					"read the lease of '" + key + "'");
		if (votes.count((ttl) -> ttl >= 0) >= this.quorum) {
			return Votes.largest(answers(votes, (ttl) -> ttl >= 0), this.quorum, -2);
		}
		if (votes.count((ttl) -> ttl < 0) > others) {
			return -2;
		}
		throw new LockException("Redlock could not read the lease of '" + key + "' on a quorum of " + this.quorum
				+ " nodes (" + this.nodes.failures(votes) + ")");
	}

	private static int allKeys(Votes<Long> votes, int size) {
		return votes.count((count) -> count == size);
	}

	private static int fewerKeys(Votes<Long> votes, int size) {
		return votes.count((count) -> count < size);
	}

	private static long[] answers(Votes<Long> votes, Predicate<Long> condition) {
		List<Long> values = new ArrayList<>();
		for (int i = 0; i < votes.size(); i++) {
			if (votes.answered(i) && condition.test(votes.value(i))) {
				values.add(votes.value(i));
			}
		}
		return values.stream().mapToLong(Long::longValue).toArray();
	}

	/**
	 * With the restart rule, asks every node whether it persists its data: fails unless a
	 * quorum answers that it does (and so could grant a lock).
	 */
	@Override
	public void ping(String key) {
		if (this.settings.requirePersistence()) {
			this.nodes.checkPersistence();
		}
		else {
			remainingLease(key);
		}
	}

	// --- plumbing and notifications
	// -------------------------------------------------------

	@Override
	public Duration commandTimeout() {
		return this.nodes.commandTimeout();
	}

	/** Lease × the clock-drift factor + 2 ms. */
	@Override
	public long driftNanos(long leaseNanos) {
		return (long) (leaseNanos * this.settings.clockDriftFactor()) + 2_000_000L;
	}

	@Override
	public void prepareListening() {
		this.notifications.prepare();
	}

	@Override
	public CompletableFuture<?> listen(String key) {
		return this.notifications.listen(key);
	}

	@Override
	public void awaitListening(CompletableFuture<?> listening) {
		this.notifications.await(listening);
	}

	@Override
	public void unlisten(String key) {
		this.notifications.unlisten(key);
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.notifications.onRelease(listener);
	}

	@Override
	public boolean notifies() {
		return this.notifications.notifies();
	}

	@Override
	public void close() {
		this.nodes.close();
		this.shutdown.run();
	}

}
