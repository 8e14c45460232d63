package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.WakeUps;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.internal.redis.LockScripts.Call;

/**
 * Redlock over N independent Redis masters (N ≥ 3, quorum N/2+1), each with its own lock
 * connection and notification connection. Every command goes to every node at once, each
 * bounded by the node timeout; the outcome is decided as soon as the replies so far
 * decide it. An acquire also waits, up to {@link Nodes#CONNECT_TIMEOUT}, for nodes that
 * are not connected yet (as the single-master store's first command waits for its
 * connection), unless a quorum answers sooner.
 *
 * <ul>
 * <li><b>Acquire</b>: the same owner token and lease on every node. Acquired only when a
 * quorum granted it, the fencing counters of a quorum were raised to the lock's token
 * (see below), and the validity time {@code lease - elapsed - drift} (drift = lease × the
 * clock-drift factor + 2 ms, elapsed measured from before the first command) is still
 * positive. The engine's local deadline is its send time (a moment before this store's
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
final class RedlockStore implements LockStore {

	private final Nodes nodes;

	private final int quorum;

	private final RedlockSettings settings;

	private final Acquisitions acquisitions;

	private final Notifications notifications;

	private final Runnable shutdown;

	/**
	 * @param shutdown shuts down the clients this store created (never given ones)
	 */
	RedlockStore(List<String> names, List<? extends AbstractRedisClient> clients, Duration commandTimeout,
			String keyPrefix, RedlockSettings settings, Runnable shutdown) {
		LockScripts.load();
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
	public Attempt acquire(Acquire request) {
		return this.acquisitions.attempt(request.id(), request.owner(), request.leaseMillis(), request.maxHoldMillis(),
				request.delayMillis());
	}

	/**
	 * The blocking attempt on {@code blocking}; cancelling the future drops the attempt's
	 * commands still on their way (none is sent again after the caller's undo).
	 */
	@Override
	public CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		Acquisitions.Sending sending = new Acquisitions.Sending();
		CompletableFuture<Attempt> result = CompletableFuture.supplyAsync(() -> this.acquisitions.attempt(request.id(),
				request.owner(), request.leaseMillis(), request.maxHoldMillis(), request.delayMillis(), sending),
				blocking);
		result.whenComplete((attempt, failure) -> {
			if (result.isCancelled()) {
				sending.drop();
			}
		});
		return result;
	}

	// --- renew
	// -----------------------------------------------------------------------------

	@Override
	public CompletableFuture<long[]> renew(List<Renewal> renewals) {
		Call call = LockScripts.renew(renewals);
		long sent = System.nanoTime();
		List<CompletableFuture<long[]>> replies = this.nodes.each((node) -> node
			.<List<Long>>eval(call.script(), call.keys(), call.args(), false, this.nodes.nodeTimeout())
			.thenApply((granted) -> LockScripts.readRenewals(renewals, granted)));
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

	// --- release, check, remaining lease
	// ----------------------------------------------------

	/**
	 * Every node that deletes a key publishes the same release id, so that a waiter's
	 * engine is not woken once per node (see {@link Notifications}).
	 */
	@Override
	public int release(Release request) {
		this.acquisitions.dropOnTheirWay(request.owner());
		return switch (request.mode()) {
			case RELEASE -> release(request.id(), request.owner());
			case KEEP -> keep(request.id(), request.owner(), request.keepMillis());
			case LEAVE, UNDO -> {
				// Redlock queues nobody: leaving is undoing
				this.acquisitions.undo(request.id(), request.owner());
				yield -1;
			}
		};
	}

	/** A leave or an undo on every node; a release or a keep as {@link #release}. */
	@Override
	public CompletableFuture<Integer> send(Release request) {
		this.acquisitions.dropOnTheirWay(request.owner());
		if (request.waits()) {
			return LockStore.super.send(request);
		}
		return this.acquisitions.undo(request.id(), request.owner());
	}

	private int release(LockId id, String owner) {
		return onQuorum(id, LockScripts.release(id, id.keys(), owner, Notifications.releaseId()), true);
	}

	/**
	 * Leaves the keys to expire when the minimum hold passes, on every node; counted like
	 * a release.
	 */
	private int keep(LockId id, String owner, long ttlMillis) {
		return onQuorum(id, LockScripts.keep(id, id.keys(), owner, ttlMillis), true);
	}

	@Override
	public int check(LockId id, String owner) {
		return onQuorum(id, LockScripts.check(id, id.keys(), owner), false);
	}

	/**
	 * Runs a script that counts the owner's keys on every node ({@code always}: sent even
	 * when its caller stopped waiting, as a release must be).
	 * @return all the keys when a quorum counted them all; fewer (the count a quorum
	 * reached) when so many nodes counted fewer that no quorum can count them all
	 * @throws LockException when too few nodes answered to tell
	 */
	private int onQuorum(LockId id, Call call, boolean always) {
		String what = call.what();
		Function<Node, CompletableFuture<Long>> command = (node) -> node.eval(call.script(), call.keys(), call.args(),
				always, this.nodes.nodeTimeout());
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

	/** The wake-up channel of these nodes. */
	WakeUps wakeUps() {
		return this.notifications;
	}

	@Override
	public void close() {
		this.nodes.close();
		this.shutdown.run();
	}

}
