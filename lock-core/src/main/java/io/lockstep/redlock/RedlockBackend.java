package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.engine.LockBackend;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.redis.LockCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redlock over N independent Redis masters (N ≥ 3, quorum N/2+1), each with its own lock
 * connection and notification connection. Every command goes to every node at once, each
 * bounded by the node timeout; the outcome is decided as soon as the replies so far
 * decide it.
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
 * retry delay of up to {@value #MAX_RETRY_DELAY_MILLIS} ms; fewer than a quorum of nodes
 * answering throws a {@link LockException} naming each node's failure.</li>
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
 * node that restarts empty never grants a lock that a quorum still holds.</li>
 * </ul>
 */
final class RedlockBackend implements LockBackend {

	static final long MAX_RETRY_DELAY_MILLIS = 200;

	private static final Logger logger = LoggerFactory.getLogger(RedlockBackend.class);

	private final List<Node> nodes;

	private final int quorum;

	private final Redlock.Settings settings;

	private final Duration commandTimeout;

	private final Duration nodeTimeout;

	private final String fenceKey;

	private final ExecutorService connector;

	private final Runnable shutdown;

	/** The latest release id heard per key with local waiters. */
	private final Map<String, String> lastRelease = new ConcurrentHashMap<>();

	/**
	 * @param shutdown shuts down the clients this backend created (never given ones)
	 */
	RedlockBackend(List<String> names, List<? extends AbstractRedisClient> clients, Duration commandTimeout,
			String keyPrefix, Redlock.Settings settings, Runnable shutdown) {
		this.connector = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "lockstep-redlock-connect");
			thread.setDaemon(true);
			return thread;
		});
		List<Node> nodes = new ArrayList<>();
		for (int i = 0; i < clients.size(); i++) {
			nodes.add(new Node(names.get(i), clients.get(i), commandTimeout, this.connector));
		}
		this.nodes = List.copyOf(nodes);
		this.quorum = nodes.size() / 2 + 1;
		this.settings = settings;
		this.commandTimeout = commandTimeout;
		Duration half = commandTimeout.dividedBy(2);
		this.nodeTimeout = (settings.nodeTimeout().compareTo(half) < 0) ? settings.nodeTimeout() : half;
		this.fenceKey = keyPrefix + "__fence";
		this.shutdown = shutdown;
		// connect in the background: the first lock need not wait, and start-up never
		// does
		this.nodes.forEach(Node::connect);
	}

	int quorum() {
		return this.quorum;
	}

	Duration nodeTimeout() {
		return this.nodeTimeout;
	}

	// --- acquire
	// ---------------------------------------------------------------------------

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
		long start = System.nanoTime();
		List<String> keys = withFenceKeys(id);
		List<String> args = List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis),
				this.settings.requirePersistence() ? "1" : "0");
		Votes<Grant> votes = await(
				Votes
					.gather(each(
							(node) -> node
								.<List<?>>eval(LockCommands.ACQUIRE_ALL, keys, args, false,
										node.isConnected() ? this.nodeTimeout
												: this.commandTimeout.plus(this.nodeTimeout))
								.thenApply((reply) -> Grant.of(reply, id.size()))),
							(sofar) -> sofar.count(Grant::acquired) >= this.quorum
									|| sofar.count(Grant::held) >= this.quorum),
				"acquire '" + id.display() + "'");
		for (int i = 0; i < this.nodes.size(); i++) {
			if (votes.answered(i)) {
				this.nodes.get(i).refusing(votes.value(i).refused());
			}
		}
		if (votes.count(Grant::acquired) >= this.quorum) {
			long[] tokens = highestTokens(votes, id.size());
			int raised = raiseFences(id, owner, tokens, votes);
			long validity = TimeUnit.MILLISECONDS.toNanos(leaseMillis) - (System.nanoTime() - start)
					- driftNanos(TimeUnit.MILLISECONDS.toNanos(leaseMillis));
			if (raised >= this.quorum && validity > 0) {
				return Attempt.acquired(tokens);
			}
			logger.debug("Redlock acquire of '{}' granted by a quorum but not valid: {} fences raised, validity {} ns",
					id.display(), raised, validity);
		}
		releaseQuietly(id, owner);
		return notAcquired(id, votes);
	}

	/** The highest token each key got from the nodes that granted the lock. */
	private static long[] highestTokens(Votes<Grant> votes, int keys) {
		long[] tokens = new long[keys];
		for (int i = 0; i < votes.size(); i++) {
			if (votes.answered(i) && votes.value(i).acquired()) {
				for (int k = 0; k < keys; k++) {
					tokens[k] = Math.max(tokens[k], votes.value(i).fencingTokens()[k]);
				}
			}
		}
		return tokens;
	}

	/**
	 * Raises the counters of the nodes that granted the lock to its tokens, where the key
	 * still holds the owner's token.
	 * @return the nodes that confirmed it
	 */
	private int raiseFences(LockId id, String owner, long[] tokens, Votes<Grant> granted) {
		List<String> args = new ArrayList<>();
		args.add(owner);
		for (long token : tokens) {
			args.add(Long.toString(token));
		}
		List<String> keys = withFenceKeys(id);
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (int i = 0; i < this.nodes.size(); i++) {
			replies.add((granted.answered(i) && granted.value(i).acquired())
					? this.nodes.get(i).eval(LockCommands.RAISE_FENCE, keys, args, false, this.nodeTimeout)
					: CompletableFuture.completedFuture(0L));
		}
		Votes<Long> raised = await(Votes.gather(replies, (sofar) -> confirmed(sofar, id.size()) >= this.quorum),
				"raise the fencing counters of '" + id.display() + "'");
		return confirmed(raised, id.size());
	}

	private Attempt notAcquired(LockId id, Votes<Grant> votes) {
		Map<String, List<Long>> byHolder = new HashMap<>();
		int blocking = Integer.MAX_VALUE;
		for (int i = 0; i < votes.size(); i++) {
			if (votes.answered(i) && votes.value(i).held()) {
				Grant grant = votes.value(i);
				byHolder.computeIfAbsent(grant.holder(), (holder) -> new ArrayList<>()).add(grant.holderTtl());
				blocking = Math.min(blocking, grant.blockingIndex());
			}
		}
		blocking = (blocking == Integer.MAX_VALUE) ? 0 : blocking;
		for (List<Long> ttls : byHolder.values()) {
			if (ttls.size() >= this.quorum) {
				// one owner holds a quorum: until its release, or until that quorum's
				// leases may have run out
				long[] values = ttls.stream().mapToLong(Long::longValue).toArray();
				return Attempt.held(Votes.largest(values, this.quorum, -1), blocking);
			}
		}
		int answered = votes.count(Grant::acquired) + votes.count(Grant::held);
		if (answered >= this.quorum) {
			// a split vote, or a grant that was no longer valid: retry after a random
			// delay, so that contenders fall out of step
			return Attempt.held(ThreadLocalRandom.current().nextLong(1, MAX_RETRY_DELAY_MILLIS + 1), blocking);
		}
		throw new LockException("Redlock could not acquire '" + id.display() + "': only " + answered + " of "
				+ this.nodes.size() + " nodes answered, a quorum is " + this.quorum + " (" + failures(votes) + ")");
	}

	// --- renew, release, check
	// ---------------------------------------------------------------

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
		List<CompletableFuture<long[]>> replies = each(
				(node) -> node.<List<Long>>eval(LockCommands.RENEW, keys, args, false, this.nodeTimeout)
					.thenApply((granted) -> perRenewal(renewals, granted)));
		CompletableFuture<long[]> result = new CompletableFuture<>();
		Votes.gather(replies, (sofar) -> Renewals.decided(sofar, renewals.size(), this.quorum)).thenAccept((votes) -> {
			long[] granted = Renewals.outcome(votes, renewals.size(), this.quorum);
			if (granted != null) {
				result.complete(granted);
				return;
			}
			LockException failure = new LockException("Redlock renewal of " + renewals.size()
					+ " lock(s) not confirmed by a quorum of " + this.quorum + " nodes (" + failures(votes) + ")");
			// the watchdog retries at once: not more often than once a node timeout
			long wait = Math.max(0, this.nodeTimeout.toNanos() - (System.nanoTime() - sent));
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

	@Override
	public int release(LockId id, String owner) {
		Votes<Long> votes = await(Votes.gather(each(
				(node) -> node.<Long>eval(LockCommands.RELEASE, id.keys(), List.of(owner), true, this.nodeTimeout)),
				(sofar) -> decidedFor(sofar, id.size())), "release '" + id.display() + "'");
		return onQuorum(votes, id.size(), "release '" + id.display() + "'");
	}

	/**
	 * Undoes an attempt on every node, publishing nothing: it frees no lock that anyone
	 * waits for, and waking the other contenders of a split vote at once would only split
	 * it again; they retry after their random delay.
	 */
	@Override
	public void releaseQuietly(LockId id, String owner) {
		for (Node node : this.nodes) {
			node.eval(LockCommands.RELEASE, id.keys(), List.of(owner, ""), true, this.commandTimeout);
		}
	}

	@Override
	public int check(LockId id, String owner) {
		Votes<Long> votes = await(Votes.gather(
				each((node) -> node.<Long>eval(LockCommands.CHECK, id.keys(), List.of(owner), false, this.nodeTimeout)),
				(sofar) -> decidedFor(sofar, id.size())), "check '" + id.display() + "'");
		return onQuorum(votes, id.size(), "check '" + id.display() + "'");
	}

	@Override
	public long remainingLease(String key) {
		Votes<Long> votes = await(
				Votes.gather(each((node) -> node.pttl(key, this.nodeTimeout)),
						(sofar) -> sofar.count((ttl) -> ttl >= 0) >= this.quorum
								|| sofar.count((ttl) -> ttl < 0) > this.nodes.size() - this.quorum),
				"read the lease of '" + key + "'");
		if (votes.count((ttl) -> ttl >= 0) >= this.quorum) {
			return Votes.largest(answers(votes, (ttl) -> ttl >= 0), this.quorum, -2);
		}
		if (votes.count((ttl) -> ttl < 0) > this.nodes.size() - this.quorum) {
			return -2;
		}
		throw new LockException("Redlock could not read the lease of '" + key + "' on a quorum of " + this.quorum
				+ " nodes (" + failures(votes) + ")");
	}

	/** Whether a quorum reported all {@code size} keys, or too many reported fewer. */
	private boolean decidedFor(Votes<Long> votes, int size) {
		return confirmed(votes, size) >= this.quorum
				|| votes.count((count) -> count < size) > this.nodes.size() - this.quorum;
	}

	/**
	 * {@code size} when a quorum reported all keys; the count a quorum reached when too
	 * many reported fewer; else a failure (too few answers to tell).
	 */
	private int onQuorum(Votes<Long> votes, int size, String what) {
		if (confirmed(votes, size) >= this.quorum) {
			return size;
		}
		if (votes.count((count) -> count < size) > this.nodes.size() - this.quorum) {
			return (int) Votes.largest(answers(votes, (count) -> true), this.quorum, 0);
		}
		throw new LockException("Redlock could not " + what + " on a quorum of " + this.quorum + " of "
				+ this.nodes.size() + " nodes (" + failures(votes) + ")");
	}

	private static int confirmed(Votes<Long> votes, int size) {
		return votes.count((count) -> count == size);
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

	// --- plumbing
	// --------------------------------------------------------------------------

	@Override
	public Duration commandTimeout() {
		return this.commandTimeout;
	}

	@Override
	public long driftNanos(long leaseNanos) {
		return (long) (leaseNanos * this.settings.clockDriftFactor()) + 2_000_000L;
	}

	private List<String> withFenceKeys(LockId id) {
		List<String> keys = new ArrayList<>(id.keys());
		id.keys().forEach((key) -> keys.add(this.fenceKey));
		return keys;
	}

	private <T> List<CompletableFuture<T>> each(Function<Node, CompletableFuture<T>> command) {
		List<CompletableFuture<T>> replies = new ArrayList<>(this.nodes.size());
		for (Node node : this.nodes) {
			replies.add(command.apply(node));
		}
		return replies;
	}

	/** Waits for gathered votes; each node's reply is bounded already. */
	private <T> Votes<T> await(CompletableFuture<Votes<T>> votes, String what) {
		long bound = this.commandTimeout.toNanos() + this.nodeTimeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
		try {
			return votes.get(bound, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new LockException("Redlock nodes did not answer within " + Duration.ofNanos(bound) + " to " + what,
					ex);
		}
		catch (ExecutionException ex) {
			throw new LockException("Redlock failed to " + what + ": " + ex.getCause().getMessage(), ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockException("Interrupted while waiting for Redlock nodes to " + what, ex);
		}
	}

	/** Why each node that did not vote did not: for messages. */
	private String failures(Votes<?> votes) {
		List<String> reasons = new ArrayList<>();
		for (int i = 0; i < votes.size(); i++) {
			Throwable failure = votes.failure(i);
			if (failure != null) {
				String reason = String.valueOf(failure.getMessage());
				if (failure instanceof TimeoutException) {
					reason = this.nodes.get(i).isConnected() ? "no reply within the node timeout"
							: "not connected in time";
				}
				reasons.add(this.nodes.get(i) + ": " + reason);
			}
			else if (votes.answered(i) && votes.value(i) instanceof Grant grant && grant.refused()) {
				reasons.add(this.nodes.get(i) + ": refused, it does not persist its data (aof_enabled:0; "
						+ "Redlock needs appendonly yes)");
			}
		}
		return reasons.isEmpty() ? "no node failed" : String.join("; ", reasons);
	}

	// --- release notifications: a waiter listens on every node; any release message
	// wakes it
	// ----------------------------------------------------------------------------

	@Override
	public void prepareListening() {
		List<CompletableFuture<Void>> preparing = each(Node::prepareListening);
		try {
			Votes.gather(preparing, (sofar) -> listening() >= this.quorum)
				.get(this.commandTimeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("Redlock notification connections not ready: {}", ex.getMessage());
		}
	}

	private int listening() {
		return (int) this.nodes.stream().filter((node) -> node.channel().isConnected()).count();
	}

	/**
	 * Subscribes on every node; completes once a quorum subscribed (a quorum shares a
	 * node with the holder's, where its release publishes) or every node answered.
	 */
	@Override
	public CompletableFuture<?> listen(String key) {
		return Votes.gather(each((node) -> node.listen(key)), (sofar) -> sofar.count((ok) -> true) >= this.quorum);
	}

	@Override
	public void awaitListening(CompletableFuture<?> listening) {
		try {
			listening.get(this.commandTimeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("Redlock subscriptions incomplete; waiters re-check periodically: {}", ex.getMessage());
		}
	}

	@Override
	public void unlisten(String key) {
		this.nodes.forEach((node) -> node.channel().unsubscribe(key));
		this.lastRelease.remove(key);
	}

	/** Tells the listener of each release once: the first node's message of it. */
	@Override
	public void onRelease(Consumer<String> listener) {
		this.nodes.forEach((node) -> node.channel().onMessage((key, message) -> {
			if (!message.startsWith("r") || !message.equals(this.lastRelease.put(key, message))) {
				listener.accept(key);
			}
		}));
	}

	@Override
	public boolean notifies() {
		return this.nodes.stream().anyMatch((node) -> node.channel().notifies());
	}

	@Override
	public void close() {
		this.connector.shutdownNow();
		this.nodes.forEach(Node::close);
		this.shutdown.run();
	}

}
