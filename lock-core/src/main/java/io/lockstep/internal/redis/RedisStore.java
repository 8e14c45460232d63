package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import io.lockstep.LockException;
import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.redis.LockScripts.Call;

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

	private final int replicaAcks;

	private final Duration replicaAckTimeout;

	RedisStore(LockCommands commands, KeyLayout layout, Publishing publishing, String clientId,
			LockCommands acquisitions, int replicaAcks, Duration replicaAckTimeout) {
		this.commands = commands;
		this.acquisitions = acquisitions;
		this.layout = layout;
		this.publishing = publishing;
		this.clientId = clientId;
		this.replicaAcks = replicaAcks;
		this.replicaAckTimeout = replicaAckTimeout;
	}

	/**
	 * The attempt waited for on the caller's thread ({@link GroupAttempt#await}): each
	 * script is bounded by the command timeout, with no timer task of its own. A failure
	 * undoes the groups acquired before it; an interrupt ends the wait with no later
	 * group sent (an attempt on its way is undone by the acquisition, after it).
	 */
	@Override
	public Attempt acquire(Acquire request) {
		GroupAttempt groups = groupAttempt(request, this.publishing.command());
		Attempt attempt;
		try {
			attempt = groups.await();
		}
		catch (RuntimeException ex) {
			undo(request.id(), groups.acquired(), request.owner(), groups.publish());
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
	 * On a Cluster, the very first use asks the server's version (blocking) and so runs
	 * on {@code blocking}.
	 */
	@Override
	public CompletableFuture<Attempt> acquireAsync(Acquire request, Executor blocking) {
		String publish = this.publishing.known();
		if (publish == null) {
			return LockStore.super.acquireAsync(request, blocking);
		}
		CompletableFuture<Attempt> reply = attempt(groupAttempt(request, publish));
		if (this.replicaAcks == 0) {
			return reply;
		}
		return reply.thenApplyAsync((result) -> {
			if (result.acquired()) {
				confirmReplicated(request);
			}
			return result;
		}, blocking);
	}

	/**
	 * One attempt: each script bounded by the command timeout, the groups acquired before
	 * a failure undone.
	 */
	private CompletableFuture<Attempt> attempt(GroupAttempt attempt) {
		return attempt.from(0).whenComplete((result, failure) -> {
			if (failure != null) {
				undo(attempt.request().id(), attempt.acquired(), attempt.request().owner(), attempt.publish());
			}
		});
	}

	private GroupAttempt groupAttempt(Acquire request, String publish) {
		return new GroupAttempt(request, publish, this.layout, this.acquisitions, this::acquireCall, this::undo);
	}

	private Call acquireCall(Acquire request, List<Integer> group) {
		List<String> keys = request.id().keys();
		List<String> fences = group.stream().map((index) -> this.layout.fence(keys.get(index))).toList();
		if (keys.size() > 1 && request.id().sharing().exclusive()) {
			// a writer on each key: one that waits marks the keys readers hold
			List<String> tables = group.stream().map((index) -> this.layout.table(keys.get(index))).toList();
			return LockScripts.acquireAll(request, this.layout.stored(keys, group), fences, tables);
		}
		LockScripts.Waiter waiter = null;
		if (keys.size() == 1 && (request.waits() || request.id().sharing().read())) {
			String key = keys.get(0);
			waiter = new LockScripts.Waiter(this.layout.queue(key), this.layout.table(key),
					this.layout.handOffChannel(key, this.clientId));
		}
		return LockScripts.acquire(request, this.layout.stored(keys, group), fences, waiter, handsOff());
	}

	/** Deletes the groups an attempt acquired before it failed; wakes nobody. */
	private void undo(LockId id, List<List<String>> acquired, String owner, String publish) {
		for (List<String> stored : acquired) {
			send(this.acquisitions, LockScripts.undo(LockScripts.quoted(id), stored, owner, publish));
		}
	}

	/**
	 * With a replica check configured, waits until enough replicas acknowledged the
	 * acquisition ({@code WAIT} on the acquisitions' connection, which made it); releases
	 * it (on the lease connection: the acquisition has run) and throws when they did not
	 * in time.
	 */
	private void confirmReplicated(Acquire request) {
		if (this.replicaAcks == 0) {
			return;
		}
		long acknowledged = this.acquisitions.waitForReplicas(this.replicaAcks, this.replicaAckTimeout);
		if (acknowledged < this.replicaAcks) {
			release(Release.of(request.id(), request.owner()));
			throw new LockException("Lock '" + request.id().display() + "' was acquired on the master, but only "
					+ acknowledged + " of the " + this.replicaAcks + " required replica(s) acknowledged it within "
					+ DurationFormat.format(this.replicaAckTimeout) + "; released it (replica-acknowledgements)");
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
		LockId id = request.id();
		String lock = LockScripts.quoted(id);
		int count = 0;
		for (List<Integer> group : this.layout.groups(id.keys())) {
			List<String> stored = this.layout.stored(id.keys(), group);
			Call call = switch (request.mode()) {
				case KEEP -> LockScripts.keep(lock, stored, request.owner(), request.keepMillis());
				case RELEASE, UNDO -> releaseCall(lock, id.keys(), group, request.owner(), false);
				case LEAVE -> releaseCall(lock, id.keys(), group, request.owner(), true);
			};
			if (request.waits()) {
				Long answer = this.commands.eval(call.script(), call.keys(), call.args(), call.what());
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
	 * A release, leave or undo bounded by the command timeout, one script per group: a
	 * leave or an undo on the acquisitions' connection, after the attempt it follows.
	 * Completes with -1 when Redis refused it (an error reply, e.g. {@code NOPERM}).
	 */
	@Override
	public CompletableFuture<Integer> send(Release request) {
		LockId id = request.id();
		String lock = LockScripts.quoted(id);
		LockCommands connection = request.waits() ? this.commands : this.acquisitions;
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (List<Integer> group : this.layout.groups(id.keys())) {
			Call call = switch (request.mode()) {
				case KEEP ->
					LockScripts.keep(lock, this.layout.stored(id.keys(), group), request.owner(), request.keepMillis());
				case RELEASE, UNDO -> releaseCall(lock, id.keys(), group, request.owner(), false);
				case LEAVE -> releaseCall(lock, id.keys(), group, request.owner(), true);
			};
			replies.add(connection.evalBounded(call.script(), call.keys(), call.args(), call.what()));
		}
		// an error reply is an answer: refused again if sent again (-1)
		return CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
			.thenApply((done) -> replies.stream().mapToInt((reply) -> reply.join().intValue()).sum())
			.exceptionallyCompose((failure) -> LockCommands.refused(failure) ? CompletableFuture.completedFuture(-1)
					: CompletableFuture.failedFuture(failure));
	}

	private Call releaseCall(String lock, List<String> keys, List<Integer> group, String owner, boolean leave) {
		LockScripts.Queues queues = null;
		if (handsOff()) {
			queues = new LockScripts.Queues(group.stream().map((i) -> this.layout.queue(keys.get(i))).toList(),
					group.stream().map((i) -> this.layout.table(keys.get(i))).toList(),
					group.stream().map((i) -> this.layout.fence(keys.get(i))).toList());
		}
		return LockScripts.release(lock, this.layout.stored(keys, group), owner, this.publishing.command(), queues,
				leave);
	}

	@Override
	public int check(LockId id, String owner) {
		int held = 0;
		for (List<Integer> group : this.layout.groups(id.keys())) {
			Call call = LockScripts.check(LockScripts.quoted(id), this.layout.stored(id.keys(), group), owner);
			Long count = this.commands.eval(call.script(), call.keys(), call.args(), call.what());
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
		return this.replicaAcks == 0;
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

}
