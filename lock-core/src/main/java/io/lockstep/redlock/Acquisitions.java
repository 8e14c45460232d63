package io.lockstep.redlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;

import io.lockstep.LockException;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redlock's acquire: the same owner token and lease sent to every node at once
 * ({@code acquire-all.lua}); acquired when a quorum granted it, the fencing counters of a
 * quorum were raised to the lock's token ({@code raise-fence.lua}) and validity is left.
 * Otherwise undone on every node, and "held" until the majority holder's lease runs out,
 * or for a random retry delay, or a {@link LockException} when too few nodes answered.
 */
final class Acquisitions {

	/** The longest random retry delay after a split vote, as in the Redlock reference. */
	static final long MAX_RETRY_DELAY_MILLIS = 200;

	private static final Logger logger = LoggerFactory.getLogger(Acquisitions.class);

	private final Nodes nodes;

	private final int quorum;

	private final String fenceKey;

	private final RedlockSettings settings;

	private final LongUnaryOperator drift;

	/**
	 * By owner token, its commands still on their way that what it sends next must not
	 * follow: the undo of its last failed attempt, or the attempt that granted its lock.
	 * Kept until each is answered or the owner sends its next attempt or its release
	 * ({@link #dropOnTheirWay}).
	 */
	private final Map<String, Sending> onTheirWay = new ConcurrentHashMap<>();

	Acquisitions(Nodes nodes, String fenceKey, RedlockSettings settings, LongUnaryOperator drift) {
		this.nodes = nodes;
		this.quorum = nodes.quorum();
		this.fenceKey = fenceKey;
		this.settings = settings;
		this.drift = drift;
	}

	/**
	 * One attempt on every node at once.
	 * @param delayMillis the lock delay each node stores with its grant, or 0
	 */
	Attempt attempt(LockId id, String owner, long leaseMillis, long maxHoldMillis, long delayMillis) {
		return attempt(id, owner, leaseMillis, maxHoldMillis, delayMillis, new Sending());
	}

	/**
	 * One attempt on every node at once, its commands sent through {@code sending}:
	 * whatever way it ends (refused, failed, interrupted, or dropped by its caller), the
	 * commands still on their way are dropped before anything follows them, so that none
	 * is sent again after a {@code NOSCRIPT} behind the owner's undo. A granted attempt
	 * lets a slow node's vote still come (a lock held on more than a quorum survives a
	 * slow node's renewal), until the owner's release ({@link #dropOnTheirWay}).
	 */
	Attempt attempt(LockId id, String owner, long leaseMillis, long maxHoldMillis, long delayMillis, Sending sending) {
		Attempt attempt = null;
		try {
			attempt = attemptOnce(id, owner, leaseMillis, maxHoldMillis, delayMillis, sending);
			return attempt;
		}
		finally {
			if (attempt != null && attempt.acquired()) {
				keepOnTheirWay(owner, sending);
			}
			else {
				sending.drop();
			}
		}
	}

	/**
	 * Before the owner's next attempt, release, keep or undo: what is still on its way of
	 * its last undo or of the attempt that granted its lock is dropped (the reply of each
	 * node cancelled). A node that refused it {@code NOSCRIPT} would get it again with
	 * its text one round trip late, after what the owner sends now: a late undo would
	 * undo the next attempt, a late attempt would take the key back after the release.
	 * Dropped, it leaves at most a key of the owner's, which its next attempt takes again
	 * or its end undoes.
	 */
	void dropOnTheirWay(String owner) {
		Sending sending = this.onTheirWay.remove(owner);
		if (sending != null) {
			sending.drop();
		}
	}

	private void keepOnTheirWay(String owner, Sending sending) {
		this.onTheirWay.put(owner, sending);
		sending.whenAnswered(() -> this.onTheirWay.remove(owner, sending));
	}

	private Attempt attemptOnce(LockId id, String owner, long leaseMillis, long maxHoldMillis, long delayMillis,
			Sending sending) {
		long start = System.nanoTime();
		List<String> keys = withFenceKeys(id);
		List<String> args = List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis),
				this.settings.requirePersistence() ? "1" : "0", "0", Long.toString(delayMillis));
		dropOnTheirWay(owner);
		List<CompletableFuture<List<?>>> sent = this.nodes.each((node) -> sending
			.send(() -> node.<List<?>>eval(LockScripts.ACQUIRE_ALL, keys, args, false, this.nodes.timeout(node))));
		Votes<NodeVote> votes = this.nodes.await(Votes.gather(
				sent.stream().map((reply) -> reply.thenApply((list) -> NodeVote.of(list, id.size()))).toList(),
				this::acquireDecided), "acquire '" + id.display() + "'");
		for (int i = 0; i < votes.size(); i++) {
			if (votes.answered(i)) {
				this.nodes.get(i).refusing(votes.value(i).refused());
			}
		}
		if (votes.count(NodeVote::acquired) >= this.quorum) {
			long[] tokens = highestTokens(votes, id.size());
			int raised = raiseFences(id, owner, tokens, votes, sending);
			long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
			long validity = leaseNanos - (System.nanoTime() - start) - this.drift.applyAsLong(leaseNanos);
			if (raised >= this.quorum && validity > 0) {
				return Attempt.acquired(tokens);
			}
			logger.debug("Redlock acquire of '{}' granted by a quorum but not valid: {} fences raised, validity {} ns",
					id.display(), raised, validity);
		}
		// a node that has not answered yet sends no retry of it (EVAL after NOSCRIPT)
		// after the undo
		sending.drop();
		Sending undo = new Sending();
		undoEach(id, owner, undo);
		keepOnTheirWay(owner, undo);
		return notAcquired(id, votes);
	}

	/** A quorum granted it, or a quorum is held by others (one owner or several). */
	private boolean acquireDecided(Votes<NodeVote> votes) {
		return votes.count(NodeVote::acquired) >= this.quorum || votes.count(NodeVote::held) >= this.quorum;
	}

	/** The highest token each key got from the nodes that granted the lock. */
	private static long[] highestTokens(Votes<NodeVote> votes, int keys) {
		long[] tokens = new long[keys];
		for (int i = 0; i < votes.size(); i++) {
			long[] granted = votes.answered(i) ? votes.value(i).fencingTokens() : null;
			if (granted != null) {
				for (int k = 0; k < keys; k++) {
					tokens[k] = Math.max(tokens[k], granted[k]);
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
	private int raiseFences(LockId id, String owner, long[] tokens, Votes<NodeVote> granted, Sending sending) {
		List<String> args = new ArrayList<>();
		args.add(owner);
		for (long token : tokens) {
			args.add(Long.toString(token));
		}
		List<String> keys = withFenceKeys(id);
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (int i = 0; i < this.nodes.size(); i++) {
			Node node = this.nodes.get(i);
			replies.add((granted.answered(i) && granted.value(i).acquired())
					? sending.send(
							() -> node.<Long>eval(LockScripts.RAISE_FENCE, keys, args, false, this.nodes.nodeTimeout()))
					: CompletableFuture.completedFuture(0L));
		}
		Votes<Long> raised = this.nodes.await(
				Votes.gather(replies, (sofar) -> sofar.count((count) -> count == id.size()) >= this.quorum),
				"raise the fencing counters of '" + id.display() + "'");
		return raised.count((count) -> count == id.size());
	}

	private Attempt notAcquired(LockId id, Votes<NodeVote> votes) {
		Map<String, List<Long>> byHolder = new HashMap<>();
		int blocking = Integer.MAX_VALUE;
		for (int i = 0; i < votes.size(); i++) {
			NodeVote vote = votes.answered(i) ? votes.value(i) : null;
			String holder = (vote != null && vote.held()) ? vote.holder() : null;
			if (vote != null && holder != null) {
				byHolder.computeIfAbsent(holder, (key) -> new ArrayList<>()).add(vote.holderTtl());
				blocking = Math.min(blocking, vote.blockingIndex());
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
		int answered = votes.count(NodeVote::acquired) + votes.count(NodeVote::held);
		if (answered >= this.quorum) {
			// a split vote, or a grant that was no longer valid: retry after a random
			// delay, so that contenders fall out of step
			return Attempt.held(ThreadLocalRandom.current().nextLong(1, MAX_RETRY_DELAY_MILLIS + 1), blocking);
		}
		throw new LockException("Redlock could not acquire '" + id.display() + "': "
				+ this.nodes.shortfall(votes.count(NodeVote::refused), answered) + " (" + this.nodes.failures(votes)
				+ ")");
	}

	/**
	 * Undoes an attempt on every node, also those that did not answer, publishing
	 * nothing: it frees no lock that anyone waits for, and waking the other contenders of
	 * a split vote at once would only split it again; they retry after their random
	 * delay. Each node gets it after the attempt's own command (one connection, in
	 * order), however late; a failed attempt cancels its replies still on their way
	 * first, so that none is sent again after it ({@code NOSCRIPT}), and the owner's next
	 * attempt drops what is left of its undo ({@link #dropOnTheirWay}).
	 * @return completes once every node answered (with the most keys one node freed; -1
	 * when one refused it with an error reply), or exceptionally when one did not:
	 * sending it again is harmless
	 */
	CompletableFuture<Integer> undo(LockId id, String owner) {
		List<CompletableFuture<Long>> replies = undoEach(id, owner, new Sending());
		// landed once every node answered: one that did not may still hold the keys
		return CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
			.thenApply((done) -> replies.stream().mapToInt((reply) -> reply.join().intValue()).max().orElse(0))
			.exceptionallyCompose((failure) -> LockCommands.refused(failure) ? CompletableFuture.completedFuture(-1)
					: CompletableFuture.failedFuture(failure));
	}

	/**
	 * The undo's reply of each node, in the nodes' order, sent through {@code sending}.
	 */
	private List<CompletableFuture<Long>> undoEach(LockId id, String owner, Sending sending) {
		return this.nodes.each((node) -> sending
			.send(() -> node.eval(LockScripts.DELETE, id.keys(), List.of(owner, ""), true, this.nodes.timeout(node))));
	}

	private List<String> withFenceKeys(LockId id) {
		List<String> keys = new ArrayList<>(id.keys());
		id.keys().forEach((key) -> keys.add(this.fenceKey));
		return keys;
	}

	/**
	 * The commands of one attempt on their way. Dropping them (at the attempt's end, or
	 * when its caller gives up) cancels each reply, so that a command still waiting for
	 * its node's connection is not sent and one refused {@code NOSCRIPT} is not sent
	 * again; a command asked for after that is not sent at all.
	 */
	static final class Sending {

		/** Guarded by {@code this}. */
		private final List<CompletableFuture<?>> replies = new ArrayList<>();

		/** Guarded by {@code this}. */
		private boolean dropped;

		<T> CompletableFuture<T> send(Supplier<CompletableFuture<T>> command) {
			synchronized (this) {
				if (this.dropped) {
					return CompletableFuture.failedFuture(new CancellationException("the attempt was dropped"));
				}
				CompletableFuture<T> reply = command.get();
				this.replies.add(reply);
				return reply;
			}
		}

		/** Runs {@code then} once every command sent so far is answered (or dropped). */
		void whenAnswered(Runnable then) {
			CompletableFuture<?>[] sent;
			synchronized (this) {
				sent = this.replies.toArray(CompletableFuture[]::new);
			}
			CompletableFuture.allOf(sent).whenComplete((done, failure) -> then.run());
		}

		void drop() {
			List<CompletableFuture<?>> sent;
			synchronized (this) {
				this.dropped = true;
				sent = List.copyOf(this.replies);
			}
			sent.forEach((reply) -> reply.cancel(false));
		}

	}

}