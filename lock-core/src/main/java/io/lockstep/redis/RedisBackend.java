package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.ReleaseChannel;
import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import io.lockstep.internal.DurationFormat;
import io.lockstep.internal.engine.LockBackend;
import io.lockstep.internal.engine.LockId;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The single-master Redis backend (standalone, or the master that Sentinel points to):
 * one Lua script per operation on the lock's own connection, release notifications over
 * pub/sub. Key layout: the lock key holds {@code "<owner token>:<fencing token>:<cap>"}
 * (with {@code ":w"} appended while someone waits for it) with the lease as its TTL; the
 * counter {@code <key-prefix>__fence} (no TTL) issues the fencing tokens; the waiters
 * queued for a direct hand-off of {@code <key-prefix><key>} are in the list
 * {@code <key-prefix>__q:<key>} and the hash {@code <key-prefix>__w:<key>} (user keys
 * cannot start with {@code "__"}), which expire a minute after their last waiter asked.
 * Without a replica check, a release hands the lock to the first live queued waiter and
 * tells it on its client's channel {@code <key-prefix>__c:<client id>}.
 * <p>
 * With a replica check, each acquisition is followed by {@code WAIT}, which blocks its
 * connection until the replicas acknowledge or its timeout passes, so acquisitions (and
 * the commands that undo them, which must reach Redis after them) have a connection of
 * their own: renewals, releases and checks of held locks never queue behind a
 * {@code WAIT}, and a slow or dead replica refuses acquisitions without costing a holder
 * its lease.
 */
final class RedisBackend implements LockBackend {

	/** Renewals, releases and checks of held locks. */
	private final LockCommands commands;

	/**
	 * Acquisitions and what undoes them: {@link #commands} itself without a replica
	 * check, else a connection of their own (their {@code WAIT} blocks it).
	 */
	private final LockCommands acquisitions;

	private final ReleaseChannel channel;

	private final String keyPrefix;

	private final String fenceKey;

	/** Where this client hears the hand-offs to its waiters. */
	private final String handOffChannel;

	private final int replicaAcks;

	private final Duration replicaAckTimeout;

	/**
	 * @param replicaAcks the replicas that must acknowledge an acquisition (WAIT), 0 for
	 * no check
	 */
	RedisBackend(AbstractRedisClient client, Duration commandTimeout, String keyPrefix, int replicaAcks,
			Duration replicaAckTimeout) {
		this.commands = new LockCommands(client, commandTimeout);
		this.acquisitions = (replicaAcks > 0) ? new LockCommands(client, commandTimeout) : this.commands;
		this.channel = new ReleaseChannel(client, commandTimeout);
		this.keyPrefix = keyPrefix;
		this.fenceKey = keyPrefix + "__fence";
		this.handOffChannel = keyPrefix + "__c:" + ReleaseChannel.newClientId();
		this.replicaAcks = replicaAcks;
		this.replicaAckTimeout = replicaAckTimeout;
	}

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
		return tryAcquire(id, owner, leaseMillis, maxHoldMillis, 0, leaseMillis, false);
	}

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis, long entryMillis,
			long handOffMillis, boolean queued) {
		Call call = acquireCall(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis, queued);
		return attempt(id, owner, this.acquisitions.eval(call.script(), call.keys(), call.args(), call.what()));
	}

	/** One script call: what it runs, on which keys, with which arguments. */
	private record Call(RedisScript<?> script, List<String> keys, List<String> args, String what) {
	}

	/**
	 * The acquire script for the lock; a one-key lock's waiter (entry {@code > 0}) also
	 * queues itself for a hand-off (or only marks the key, with the replica check).
	 */
	private Call acquireCall(LockId id, String owner, long leaseMillis, long maxHoldMillis, long entryMillis,
			long handOffMillis, boolean queued) {
		List<String> keys = new ArrayList<>(id.keys());
		id.keys().forEach((key) -> keys.add(this.fenceKey));
		List<String> args = List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis));
		if (id.size() > 1) {
			return new Call(LockCommands.ACQUIRE_ALL, keys, args, "acquire " + id.keys());
		}
		if (entryMillis > 0) {
			keys.add(queueKey(id.first()));
			keys.add(tableKey(id.first()));
			args = List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis),
					handsOff() ? LockCommands.queueMode(queued) : "w", Long.toString(entryMillis), this.handOffChannel,
					Long.toString(handOffMillis));
		}
		return new Call(LockCommands.ACQUIRE, keys, args, "acquire '" + id.first() + "'");
	}

	/**
	 * The same script by the client's asynchronous API; with the replica check, the
	 * {@code WAIT} that follows a grant runs on {@code blocking}.
	 */
	@Override
	public CompletableFuture<Attempt> tryAcquireAsync(LockId id, String owner, long leaseMillis, long maxHoldMillis,
			long entryMillis, long handOffMillis, boolean queued, Executor blocking) {
		Call call = acquireCall(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis, queued);
		CompletableFuture<List<Long>> reply = this.acquisitions.evalBounded(call.script(), call.keys(), call.args(),
				call.what());
		if (this.replicaAcks == 0) {
			return reply.thenApply((values) -> attempt(id, owner, values));
		}
		return reply.thenApplyAsync((values) -> attempt(id, owner, values), blocking);
	}

	private Attempt attempt(LockId id, String owner, List<Long> reply) {
		if (reply.get(0) == 1L) {
			long[] fences = new long[id.size()];
			for (int i = 0; i < fences.length; i++) {
				fences[i] = reply.get(i + 1);
			}
			confirmReplicated(id, owner);
			// acquire.lua also tells the lease it set on a key that was the owner's
			// already
			return (id.size() == 1 && reply.size() > 2) ? Attempt.acquired(fences, reply.get(2))
					: Attempt.acquired(fences);
		}
		if (id.size() == 1 && reply.size() > 3) {
			return Attempt.held(reply.get(1), 0, reply.get(3));
		}
		return Attempt.held(reply.get(1), (reply.size() > 2) ? reply.get(2).intValue() : 0);
	}

	/**
	 * With a replica check configured, waits until enough replicas acknowledged the
	 * acquisition ({@code WAIT} on the acquisitions' connection, which made it); releases
	 * it (on the lease connection: the acquisition has run) and throws when they did not
	 * in time.
	 */
	private void confirmReplicated(LockId id, String owner) {
		if (this.replicaAcks == 0) {
			return;
		}
		long acknowledged = this.acquisitions.waitForReplicas(this.replicaAcks, this.replicaAckTimeout);
		if (acknowledged < this.replicaAcks) {
			release(id, owner);
			throw new LockException("Lock '" + id.display() + "' was acquired on the master, but only " + acknowledged
					+ " of the " + this.replicaAcks + " required replica(s) acknowledged it within "
					+ DurationFormat.format(this.replicaAckTimeout) + "; released it (replica-acknowledgements)");
		}
	}

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
		return this.commands.<List<Long>>evalAsync(LockCommands.RENEW, keys, args).thenApply((replies) -> {
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
		});
	}

	@Override
	public boolean handsOff() {
		return this.replicaAcks == 0;
	}

	@Override
	public void onHandOff(HandOffListener listener) {
		this.channel.onHandOff(listener);
	}

	@Override
	public CompletableFuture<?> listenForHandOffs(String key) {
		return this.channel.subscribeOwn(this.handOffChannel);
	}

	@Override
	public boolean hearsHandOffs(String key) {
		return this.channel.hearsOwn(this.handOffChannel);
	}

	private String queueKey(String key) {
		return this.keyPrefix + "__q:" + key.substring(this.keyPrefix.length());
	}

	private String tableKey(String key) {
		return this.keyPrefix + "__w:" + key.substring(this.keyPrefix.length());
	}

	/** The lock keys, then their waiter queues, waiter tables and fencing counters. */
	private List<String> releaseKeys(LockId id) {
		List<String> keys = new ArrayList<>(id.keys());
		id.keys().forEach((key) -> keys.add(queueKey(key)));
		id.keys().forEach((key) -> keys.add(tableKey(key)));
		id.keys().forEach((key) -> keys.add(this.fenceKey));
		return keys;
	}

	private List<String> releaseArgs(String owner, boolean leave) {
		return handsOff() ? List.of(owner, "released", "PUBLISH", "queues", leave ? "leave" : "")
				: List.of(owner, "released", "PUBLISH");
	}

	@Override
	public int release(LockId id, String owner) {
		Long deleted = this.commands.eval(LockCommands.RELEASE, handsOff() ? releaseKeys(id) : id.keys(),
				releaseArgs(owner, false), "release '" + id.display() + "'");
		return deleted.intValue();
	}

	@Override
	public void leave(LockId id, String owner) {
		this.acquisitions.evalAsync(LockCommands.RELEASE, handsOff() ? releaseKeys(id) : id.keys(),
				releaseArgs(owner, true));
	}

	@Override
	public int keep(LockId id, String owner, long ttlMillis) {
		Long kept = this.commands.eval(LockCommands.KEEP, id.keys(), List.of(owner, Long.toString(ttlMillis)),
				"keep '" + id.display() + "' until its minimum hold passes");
		return kept.intValue();
	}

	@Override
	public void releaseQuietly(LockId id, String owner) {
		this.acquisitions.evalAsync(LockCommands.RELEASE, handsOff() ? releaseKeys(id) : id.keys(),
				releaseArgs(owner, false));
	}

	@Override
	public int check(LockId id, String owner) {
		Long held = this.commands.eval(LockCommands.CHECK, id.keys(), List.of(owner), "check '" + id.display() + "'");
		return held.intValue();
	}

	@Override
	public long remainingLease(String key) {
		return this.commands.pttl(key);
	}

	@Override
	public Duration commandTimeout() {
		return this.commands.timeout();
	}

	@Override
	public void prepareListening() {
		this.channel.prepare();
	}

	@Override
	public CompletableFuture<?> listen(String key) {
		return this.channel.subscribe(key);
	}

	@Override
	public void awaitListening(CompletableFuture<?> listening) {
		this.channel.await(listening);
	}

	@Override
	public void unlisten(String key) {
		this.channel.unsubscribe(key);
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.channel.onRelease(listener);
	}

	@Override
	public boolean notifies() {
		return this.channel.notifies();
	}

	@Override
	public void close() {
		this.channel.close();
		if (this.acquisitions != this.commands) {
			this.acquisitions.close();
		}
		this.commands.close();
	}

}
