package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.LockStore.Successor;
import io.lockstep.internal.engine.Storage;
import io.lockstep.internal.redis.LockScripts.Call;
import org.jspecify.annotations.Nullable;

/**
 * The Redis store of a single master (standalone, or the master Sentinel points to) and
 * of a Cluster: one Lua script per operation and group of keys (a {@link KeyLayout}
 * decides where each key lives and which keys one script may touch), on the lock's own
 * connection. The lock key holds {@code "<owner token>:<fencing token>:<cap>"} (with
 * {@code ":w"} appended while someone waits for it) with the lease as its TTL. A lock on
 * keys of several groups (Cluster slots) is acquired group by group in group order, all
 * or nothing (earlier groups are undone when a later one is held); renewals, releases and
 * checks are batched per group. Without a replica check, a release hands a one-key lock
 * to its first live queued waiter and tells it on its client's channel.
 * <p>
 * With a replica check (single master only), each acquisition is followed by
 * {@code WAIT}, which blocks its connection until the replicas acknowledge or its timeout
 * passes, so acquisitions (and the commands that undo them, which must reach Redis after
 * them) have a connection of their own: renewals, releases and checks of held locks never
 * queue behind a {@code WAIT}, and a slow or dead replica refuses acquisitions without
 * costing a holder its lease.
 * <p>
 * Long for a reason: the store seam on Redis in one place. Attempts, undos, renewals and
 * releases over the key layout are a few lines each, and the attempt over several groups
 * ({@link GroupAttempt}) calls back into the store's scripts and undo, so it is a part of
 * the store, not a class of its own.
 */
public final class RedisStore implements LockStore {

	/** Renewals, releases and checks of held locks. */
	private final LockCommands commands;

	/**
	 * Acquisitions and what undoes them: {@link #commands} itself without a replica
	 * check, else a connection of their own (their {@code WAIT} blocks it).
	 */
	private final LockCommands acquisitions;

	private final KeyLayout layout;

	private final Publishing publishing;

	/** Names this client's hand-off channels. */
	private final String clientId;

	private final ReplicaCheck replicaCheck;

	private RedisStore(LockCommands commands, LockCommands acquisitions, KeyLayout layout, Publishing publishing,
			String clientId, ReplicaCheck replicaCheck) {
		this.commands = commands;
		this.acquisitions = acquisitions;
		this.layout = layout;
		this.publishing = publishing;
		this.clientId = clientId;
		this.replicaCheck = replicaCheck;
	}

	/**
	 * The store and wake-up channel of a Redis deployment on the client (which stays the
	 * caller's to shut down), sharing what they share: the lock connection, the
	 * notification channel, the choice of publish command and the client's id.
	 * @param replicaAcks the replicas that must acknowledge an acquisition (WAIT), 0 for
	 * no check; a single master's layout only
	 */
	public static Storage create(AbstractRedisClient client, Duration commandTimeout, KeyLayout layout, int replicaAcks,
			Duration replicaAckTimeout) {
		LockScripts.load();
		LockCommands commands = new LockCommands(client, commandTimeout);
		LockCommands acquisitions = (replicaAcks > 0) ? new LockCommands(client, commandTimeout) : commands;
		PubSubChannel channel = new PubSubChannel(client, commandTimeout);
		// asked on a channel named like a fencing counter: in the key prefix, which an
		// ACL user's channel rights cover, and heard by nobody
		Publishing publishing = new Publishing(commands, layout.mayShard(), layout.fence("__probe"), channel::sharded);
		String clientId = newClientId();
		commands.connectSoon();
		if (acquisitions != commands) {
			acquisitions.connectSoon();
		}
		RedisStore store = new RedisStore(commands, acquisitions, layout, publishing, clientId,
				new ReplicaCheck(replicaAcks, replicaAckTimeout));
		return new Storage(store, new RedisWakeUps(channel, layout, publishing, clientId));
	}

	/**
	 * A random id for a client's own channels (64 bits, hex): not a secret, only unique.
	 */
	private static String newClientId() {
		return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
	}

	/**
	 * The attempt waited for on the caller's thread ({@link GroupAttempt#await}): each
	 * script is bounded by the command timeout, with no timer task of its own. A failure
	 * undoes the groups acquired before it; an interrupt ends the wait with no later
	 * group sent (an attempt on its way is undone by the acquisition, after it).
	 */
	@Override
	public Attempt acquire(Acquire request) {
		GroupAttempt groups = new GroupAttempt(request, this.publishing.command());
		Attempt attempt;
		try {
			attempt = groups.await();
		}
		catch (RuntimeException ex) {
			groups.undone();
			throw ex;
		}
		if (attempt.acquired()) {
			confirmReplicated(request);
		}
		return attempt;
	}

	/**
	 * The scripts, group by group in group order, by the client's asynchronous API; with
	 * the replica check, the {@code WAIT} that follows a grant runs on {@code blocking}.
	 * Cancelling the future drops what was not sent: no later group, no script sent again
	 * after a {@code NOSCRIPT} (the caller's undo, sent after the cancel, would run
	 * before it). On a Cluster, the very first use asks the server's version (blocking)
	 * and so runs on {@code blocking}: until the publish command is known, an attempt
	 * runs as the blocking one, and cancelling its future drops nothing.
	 */
	@Override
	public CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		String publish = this.publishing.known();
		if (publish == null) {
			return LockStore.super.acquireAsync(request, blocking);
		}
		GroupAttempt groups = new GroupAttempt(request, publish);
		CompletableFuture<Attempt> reply = attempt(groups);
		CompletableFuture<Attempt> result = (this.replicaCheck.acks() == 0) ? reply
				: reply.thenApplyAsync((attempt) -> {
					if (attempt.acquired()) {
						confirmReplicated(request);
					}
					return attempt;
				}, blocking);
		result.whenComplete((attempt, failure) -> {
			if (result.isCancelled()) {
				groups.abandon();
			}
		});
		return result;
	}

	/**
	 * One attempt: each script bounded by the command timeout, the groups acquired before
	 * a failure undone.
	 */
	private CompletableFuture<Attempt> attempt(GroupAttempt attempt) {
		return attempt.from(0).whenComplete((result, failure) -> {
			if (failure != null) {
				attempt.undone();
			}
		});
	}

	private Call acquireCall(Acquire request, List<Integer> group) {
		List<String> keys = request.id().keys();
		List<String> fences = KeyLayout.each(keys, group, this.layout::fence);
		if (keys.size() > 1 && request.id().sharing().exclusive()) {
			// a writer on each key: one that waits marks the keys readers hold
			List<String> tables = KeyLayout.each(keys, group, this.layout::table);
			return LockScripts.acquireAll(request, this.layout.stored(keys, group), fences, tables);
		}
		LockScripts.QueueKeys waiter = null;
		if (keys.size() == 1 && (request.waits() || request.id().sharing().read())) {
			String key = keys.get(0);
			waiter = new LockScripts.QueueKeys(this.layout.queue(key), this.layout.table(key),
					this.layout.handOffChannel(key, this.clientId));
		}
		return LockScripts.acquire(request, this.layout.stored(keys, group), fences, waiter, handsOff());
	}

	/**
	 * With a replica check configured, waits until enough replicas acknowledged the
	 * acquisition ({@code WAIT} on the acquisitions' connection, which made it); releases
	 * it (on the lease connection: the acquisition has run) and throws when they did not
	 * in time.
	 */
	private void confirmReplicated(Acquire request) {
		ReplicaCheck check = this.replicaCheck;
		if (check.acks() == 0) {
			return;
		}
		long acknowledged = this.acquisitions.waitForReplicas(check.acks(), check.timeout());
		if (acknowledged < check.acks()) {
			release(Release.of(request.id(), request.owner()));
			throw new LockException("Lock '" + request.id().display() + "' was acquired on the master, but only "
					+ acknowledged + " of the " + check.acks() + " required replica(s) acknowledged it within "
					+ DurationFormat.format(check.timeout()) + "; released it (replica-acknowledgements)");
		}
	}

	@Override
	public CompletableFuture<long[]> renew(List<Renewal> renewals) {
		// every key of every renewal, with the renewal it belongs to; one script per
		// group
		List<String> keys = new ArrayList<>();
		List<Integer> renewalOf = new ArrayList<>();
		for (int r = 0; r < renewals.size(); r++) {
			for (String key : renewals.get(r).id().keys()) {
				keys.add(key);
				renewalOf.add(r);
			}
		}
		List<List<Integer>> groups = this.layout.groups(keys);
		List<CompletableFuture<List<Long>>> calls = new ArrayList<>();
		for (List<Integer> group : groups) {
			List<String> owners = group.stream().map((k) -> renewals.get(renewalOf.get(k)).owner()).toList();
			List<Long> leases = group.stream().map((k) -> renewals.get(renewalOf.get(k)).leaseMillis()).toList();
			Call call = LockScripts.renew(this.layout.stored(keys, group), owners, leases);
			calls.add(this.commands.evalAsync(call.script(), call.keys(), call.args()));
		}
		return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
			.thenApply((done) -> LockScripts.readRenewals(renewals.size(), renewalOf, groups,
					calls.stream().map(CompletableFuture::join).toList()));
	}

	@Override
	public int release(Release request) {
		int count = 0;
		for (List<Integer> group : this.layout.groups(request.id().keys())) {
			Call call = releaseCall(request, group);
			if (request.waits()) {
				Long answer = this.commands.eval(call.script(), call.keys(), call.args(), call.description());
				count += answer.intValue();
			}
			else {
				// after the attempt it undoes, on the attempt's connection
				send(this.acquisitions, call);
			}
		}
		return request.waits() ? count : -1;
	}

	/**
	 * A release that names a successor when it hands off: the reply is the fencing token
	 * negated when the key was handed to it, which the successor is told on the I/O
	 * thread that reads the reply, before the caller is woken.
	 */
	@Override
	public int release(Release request, @Nullable Successor successor) {
		if (successor == null) {
			return release(request);
		}
		Call call = LockScripts.naming(releaseCall(request, List.of(0)), successor);
		long answer = this.commands.<Long>eval(call.script(), call.keys(), call.args(), call.description(), (reply) -> {
			if (reply < 0) {
				successor.handed().accept(-reply);
			}
		});
		return (answer < 0) ? 1 : (int) answer;
	}

	/**
	 * A release, leave or undo bounded by the command timeout, one script per group: a
	 * leave or an undo on the acquisitions' connection, after the attempt it follows.
	 * Completes with -1 when Redis refused it (an error reply, e.g. {@code NOPERM}).
	 */
	@Override
	public CompletableFuture<Integer> send(Release request) {
		LockCommands connection = request.waits() ? this.commands : this.acquisitions;
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (List<Integer> group : this.layout.groups(request.id().keys())) {
			Call call = releaseCall(request, group);
			replies.add(connection.evalBounded(call.script(), call.keys(), call.args(), call.description()));
		}
		// an error reply is an answer: refused again if sent again (-1)
		return CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
			.thenApply((done) -> replies.stream().mapToInt((reply) -> reply.join().intValue()).sum())
			.exceptionallyCompose((failure) -> LockCommands.refused(failure) ? CompletableFuture.completedFuture(-1)
					: CompletableFuture.failedFuture(failure));
	}

	/** The script of a release, keep, leave or undo for one group of its keys. */
	private Call releaseCall(Release request, List<Integer> group) {
		List<String> keys = request.id().keys();
		if (request.mode() == Release.Mode.KEEP) {
			return LockScripts.keep(request.id(), this.layout.stored(keys, group), request.owner(),
					request.keepMillis());
		}
		LockScripts.Queues queues = null;
		if (handsOff()) {
			queues = new LockScripts.Queues(KeyLayout.each(keys, group, this.layout::queue),
					KeyLayout.each(keys, group, this.layout::table), KeyLayout.each(keys, group, this.layout::fence));
		}
		return LockScripts.release(request.id(), this.layout.stored(keys, group), request.owner(),
				this.publishing.command(), queues, request.mode() == Release.Mode.LEAVE);
	}

	@Override
	public int check(LockId id, String owner) {
		int held = 0;
		for (List<Integer> group : this.layout.groups(id.keys())) {
			Call call = LockScripts.check(id, this.layout.stored(id.keys(), group), owner);
			Long count = this.commands.eval(call.script(), call.keys(), call.args(), call.description());
			held += count.intValue();
		}
		return held;
	}

	@Override
	public long remainingLease(String key) {
		return this.commands.pttl(this.layout.stored(key));
	}

	@Override
	public Duration commandTimeout() {
		return this.commands.timeout();
	}

	/**
	 * Without a replica check: a hand-off must not skip the replicas' acknowledgement.
	 */
	@Override
	public boolean handsOff() {
		return this.replicaCheck.acks() == 0;
	}

	@Override
	public boolean handsToSuccessors() {
		return handsOff();
	}

	/** Read locks and semaphores: every key of one in one slot, as for the plain lock. */
	@Override
	public boolean shares() {
		return true;
	}

	@Override
	public void close() {
		if (this.acquisitions != this.commands) {
			this.acquisitions.close();
		}
		this.commands.close();
	}

	private static void send(LockCommands connection, Call call) {
		connection.evalAsync(call.script(), call.keys(), call.args());
	}

	/**
	 * One attempt over the groups of a lock's keys, in group order: waited for on the
	 * caller's thread ({@link #await}) or by the client's asynchronous API
	 * ({@link #from}).
	 */
	private final class GroupAttempt {

		private final Acquire request;

		private final String publish;

		private final List<List<Integer>> groups;

		private final long[] fences;

		/** The stored keys of the groups acquired so far. */
		private final List<List<String>> acquired = new ArrayList<>();

		/** The group's script on its way ({@link #from}); guarded by {@code this}. */
		private @Nullable CompletableFuture<?> current;

		/** The caller gave up ({@link #abandon}); guarded by {@code this}. */
		private boolean abandoned;

		GroupAttempt(Acquire request, String publish) {
			this.request = request;
			this.publish = publish;
			this.groups = RedisStore.this.layout.groups(request.id().keys());
			this.fences = new long[request.id().size()];
		}

		/**
		 * The attempt on the caller's thread, group by group: each script is sent and its
		 * reply waited for there, at most the command timeout, so that no timer task is
		 * scheduled and cancelled per attempt (the caller waits with a deadline of its
		 * own). A failure or an interrupt ends it at once: no later group is sent, and a
		 * script still waiting for the connection is never sent. The caller undoes the
		 * groups {@link #acquired} when it throws.
		 */
		Attempt await() {
			Attempt attempt = null;
			for (List<Integer> group : this.groups) {
				Call call = acquireCall(this.request, group);
				List<Long> reply = RedisStore.this.acquisitions.eval(call.script(), call.keys(), call.args(),
						call.description());
				attempt = LockScripts.readAcquire(reply, group, this.fences, this.request);
				if (!attempt.acquired()) {
					RedisStore.this.acquisitions.await(undone(), () -> LockScripts.undoing(this.request.id()));
					return attempt;
				}
				this.acquired.add(RedisStore.this.layout.stored(this.request.id().keys(), group));
			}
			return attempt;
		}

		/**
		 * The caller gave up: no later group is sent, and the one on its way is not sent
		 * again after a {@code NOSCRIPT}.
		 */
		void abandon() {
			synchronized (this) {
				this.abandoned = true;
				if (this.current != null) {
					this.current.cancel(false);
				}
			}
		}

		/**
		 * Undoes the groups acquired so far, completing once Redis ran every undo: the
		 * attempt reports that a group is held only then, because the acquisition's next
		 * attempt, under the same owner token, must not run before an undo of this one.
		 * The order of one connection is not enough: a script Redis does not have cached
		 * ({@code NOSCRIPT}: its first run on a node, a restart, a failover, a
		 * {@code SCRIPT FLUSH}) runs one round trip late, after what was sent behind it.
		 * Fails when an undo fails or is not answered within the command timeout; the
		 * attempt then fails, and the acquisition undoes the whole lock. An attempt that
		 * fails otherwise sends it without waiting. Wakes nobody.
		 */
		private CompletableFuture<Void> undone() {
			List<CompletableFuture<Object>> undos = new ArrayList<>();
			for (List<String> stored : this.acquired) {
				Call call = LockScripts.undo(this.request.id(), stored, this.request.owner(), this.publish);
				undos.add(RedisStore.this.acquisitions.evalBounded(call.script(), call.keys(), call.args(),
						call.description()));
			}
			return CompletableFuture.allOf(undos.toArray(CompletableFuture[]::new));
		}

		/**
		 * The attempt by the client's asynchronous API, group by group from
		 * {@code index}: each script bounded by the command timeout.
		 */
		CompletableFuture<Attempt> from(int index) {
			List<Integer> group = this.groups.get(index);
			Call call = acquireCall(this.request, group);
			CompletableFuture<List<Long>> sent;
			synchronized (this) {
				if (this.abandoned) {
					return CompletableFuture.failedFuture(new CancellationException("abandoned"));
				}
				// never blocks
				sent = RedisStore.this.acquisitions.evalBounded(call.script(), call.keys(), call.args(),
						call.description());
				this.current = sent;
			}
			return sent.thenCompose((reply) -> {
				Attempt attempt = LockScripts.readAcquire(reply, group, this.fences, this.request);
				if (!attempt.acquired()) {
					return undone().thenApply((done) -> attempt);
				}
				this.acquired.add(RedisStore.this.layout.stored(this.request.id().keys(), group));
				return (index + 1 == this.groups.size()) ? CompletableFuture.completedFuture(attempt) : from(index + 1);
			});
		}

	}

	/**
	 * The replicas that must acknowledge an acquisition ({@code WAIT}), 0 for no check,
	 * and how long they may take.
	 */
	private record ReplicaCheck(int acks, Duration timeout) {
	}

}
