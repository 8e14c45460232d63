package io.lockstep.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.LockException;
import io.lockstep.internal.engine.LockBackend;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.ReleaseChannel;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis Cluster backend. Key layout: the logical key {@code <prefix><rest>} is stored
 * as {@code <prefix>{<tag>}<rest>}, where the tag is the one of the slot of the whole
 * logical key ({@link SlotTags}); each slot has one fencing counter
 * {@code <prefix>{<tag>}__fence} (at most 16,384 counters in all), and the release
 * notification channel is the stored key itself. Every script touches one slot: a
 * single-key acquire or release is one command on one node; a lock on keys of several
 * slots is acquired slot by slot in slot order, all or nothing (earlier slots are
 * released when a later one is held), and renewals and releases are batched per slot.
 * Notifications use sharded pub/sub (SSUBSCRIBE/SPUBLISH) from Redis 7, and fall back to
 * PUBLISH/SUBSCRIBE, which the Cluster broadcasts to every node, before it (one WARN).
 * The waiters queued for a direct hand-off of a key are in
 * {@code <prefix>{<tag>}__q:<rest>} and {@code <prefix>{<tag>}__w:<rest>}, in the key's
 * slot.
 */
final class ClusterBackend implements LockBackend {

	private static final Logger logger = LoggerFactory.getLogger(ClusterBackend.class);

	private final LockCommands commands;

	private final ReleaseChannel channel;

	private final String prefix;

	private volatile @Nullable String publish;

	private final String clientId = ReleaseChannel.newClientId();

	ClusterBackend(RedisClusterClient client, Duration commandTimeout, String keyPrefix) {
		if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
			throw new IllegalArgumentException("'keyPrefix' must not contain '{' or '}' on a Redis Cluster, where "
					+ "Lockstep sets the hash tag itself; got '" + keyPrefix + "'");
		}
		this.commands = new LockCommands(client, commandTimeout);
		this.channel = new ReleaseChannel(client, commandTimeout);
		this.prefix = keyPrefix;
	}

	/** The stored key of a logical key. */
	String stored(String key) {
		String rest = key.startsWith(this.prefix) ? key.substring(this.prefix.length()) : key;
		return this.prefix + "{" + SlotTags.tag(SlotTags.slot(key)) + "}" + rest;
	}

	/** The logical key of a stored key (a notification channel). */
	String logical(String stored) {
		int close = stored.indexOf('}', this.prefix.length());
		return this.prefix + stored.substring(close + 1);
	}

	private String queued(String key, String kind) {
		String rest = key.startsWith(this.prefix) ? key.substring(this.prefix.length()) : key;
		return this.prefix + "{" + SlotTags.tag(SlotTags.slot(key)) + "}__" + kind + ":" + rest;
	}

	/**
	 * The release script's keys for logical keys of one slot: the stored keys, their
	 * waiter queues, waiter tables and the slot's fencing counter.
	 */
	private List<String> releaseKeys(List<String> keys) {
		List<String> all = new ArrayList<>();
		keys.forEach((key) -> all.add(stored(key)));
		keys.forEach((key) -> all.add(queued(key, "q")));
		keys.forEach((key) -> all.add(queued(key, "w")));
		keys.forEach((key) -> all.add(fenceKey(SlotTags.slot(key))));
		return all;
	}

	private List<String> releaseArgs(String owner, boolean leave) {
		return List.of(owner, "released", publishCommand(), "queues", leave ? "leave" : "");
	}

	private void releaseAsync(LockId id, String owner, boolean leave) {
		for (List<Integer> group : bySlot(id.keys()).values()) {
			List<String> keys = group.stream().map((index) -> id.keys().get(index)).toList();
			this.commands.evalAsync(LockCommands.RELEASE, releaseKeys(keys), releaseArgs(owner, leave));
		}
	}

	@Override
	public boolean handsOff() {
		return true;
	}

	@Override
	public void onHandOff(HandOffListener listener) {
		this.channel.onHandOff((stored, owner, fencingToken, leaseMillis) -> listener.handedOff(logical(stored), owner,
				fencingToken, leaseMillis));
	}

	/**
	 * The acquire script's arguments; a one-key lock's waiter (entry {@code > 0}) also
	 * queues itself for a hand-off.
	 */
	private List<String> acquireArgs(LockId id, String owner, long leaseMillis, long maxHoldMillis, long entryMillis,
			long handOffMillis, boolean queued) {
		if (id.size() == 1 && entryMillis > 0) {
			return List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis),
					LockCommands.queueMode(queued), Long.toString(entryMillis), handOffChannel(id.first()),
					Long.toString(handOffMillis));
		}
		return List.of(owner, Long.toString(leaseMillis), Long.toString(maxHoldMillis));
	}

	/** A one-key lock's waiter queue and table when its waiter queues itself, or none. */
	private List<String> queues(LockId id, long entryMillis) {
		return (id.size() == 1 && entryMillis > 0) ? List.of(queued(id.first(), "q"), queued(id.first(), "w"))
				: List.of();
	}

	/** Where this client hears the hand-offs of keys of the key's slot. */
	private String handOffChannel(String key) {
		return this.prefix + "{" + SlotTags.tag(SlotTags.slot(key)) + "}__c:" + this.clientId;
	}

	@Override
	public CompletableFuture<?> listenForHandOffs(String key) {
		return (this.publish != null) ? this.channel.subscribeOwn(handOffChannel(key))
				: CompletableFuture.completedFuture(null);
	}

	@Override
	public boolean hearsHandOffs(String key) {
		return this.publish != null && this.channel.hearsOwn(handOffChannel(key));
	}

	@Override
	public void leave(LockId id, String owner) {
		releaseAsync(id, owner, true);
	}

	private String fenceKey(int slot) {
		return this.prefix + "{" + SlotTags.tag(slot) + "}__fence";
	}

	/** The indexes of the lock's keys by slot, in slot order. */
	private static Map<Integer, List<Integer>> bySlot(List<String> keys) {
		Map<Integer, List<Integer>> groups = new TreeMap<>();
		for (int i = 0; i < keys.size(); i++) {
			groups.computeIfAbsent(SlotTags.slot(keys.get(i)), (slot) -> new ArrayList<>()).add(i);
		}
		return groups;
	}

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
		return tryAcquire(id, owner, leaseMillis, maxHoldMillis, 0, leaseMillis, false);
	}

	@Override
	public Attempt tryAcquire(LockId id, String owner, long leaseMillis, long maxHoldMillis, long entryMillis,
			long handOffMillis, boolean queued) {
		String publishCommand = publishCommand();
		long[] fences = new long[id.size()];
		List<List<String>> acquired = new ArrayList<>();
		try {
			for (Map.Entry<Integer, List<Integer>> group : bySlot(id.keys()).entrySet()) {
				List<String> keys = new ArrayList<>();
				group.getValue().forEach((index) -> keys.add(stored(id.keys().get(index))));
				List<String> scriptKeys = new ArrayList<>(keys);
				keys.forEach((key) -> scriptKeys.add(fenceKey(group.getKey())));
				List<String> args = acquireArgs(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis,
						queued);
				scriptKeys.addAll(queues(id, entryMillis));
				List<Long> reply = this.commands.eval(
						(keys.size() == 1) ? LockCommands.ACQUIRE : LockCommands.ACQUIRE_ALL, scriptKeys, args,
						"acquire " + keys);
				if (reply.get(0) != 1L) {
					rollback(acquired, owner, publishCommand);
					if (id.size() == 1 && reply.size() > 3) {
						return Attempt.held(reply.get(1), 0, reply.get(3));
					}
					int blocking = (reply.size() > 2) ? reply.get(2).intValue() : 0;
					return Attempt.held(reply.get(1), group.getValue().get(blocking));
				}
				acquired.add(keys);
				for (int i = 0; i < group.getValue().size(); i++) {
					fences[group.getValue().get(i)] = reply.get(i + 1);
				}
				if (id.size() == 1 && reply.size() > 2) {
					// acquire.lua tells the lease it set on a key that was the owner's
					// already
					return Attempt.acquired(fences, reply.get(2));
				}
			}
			return Attempt.acquired(fences);
		}
		catch (LockException ex) {
			rollback(acquired, owner, publishCommand);
			throw ex;
		}
	}

	/**
	 * The same scripts, slot by slot in slot order, by the client's asynchronous API. The
	 * very first use asks the server's version (blocking) and so runs on
	 * {@code blocking}.
	 */
	@Override
	public CompletableFuture<Attempt> tryAcquireAsync(LockId id, String owner, long leaseMillis, long maxHoldMillis,
			long entryMillis, long handOffMillis, boolean queued, Executor blocking) {
		String publishCommand = this.publish;
		if (publishCommand == null) {
			return LockBackend.super.tryAcquireAsync(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis,
					queued, blocking);
		}
		List<String> args = acquireArgs(id, owner, leaseMillis, maxHoldMillis, entryMillis, handOffMillis, queued);
		List<String> queueKeys = queues(id, entryMillis);
		SlotAttempt attempt = new SlotAttempt(id, owner, args, queueKeys, publishCommand,
				new ArrayList<>(bySlot(id.keys()).entrySet()));
		return attempt.from(0).whenComplete((result, failure) -> {
			if (failure != null) {
				rollback(attempt.acquired, owner, publishCommand);
			}
		});
	}

	/** One asynchronous attempt over the slots of a lock, in slot order. */
	private final class SlotAttempt {

		private final LockId id;

		private final String owner;

		private final List<String> args;

		/** A one-key lock's queue keys, appended to its script's keys, or none. */
		private final List<String> queueKeys;

		private final String publishCommand;

		private final List<Map.Entry<Integer, List<Integer>>> groups;

		private final long[] fences;

		private final List<List<String>> acquired = new ArrayList<>();

		SlotAttempt(LockId id, String owner, List<String> args, List<String> queueKeys, String publishCommand,
				List<Map.Entry<Integer, List<Integer>>> groups) {
			this.id = id;
			this.owner = owner;
			this.args = args;
			this.queueKeys = queueKeys;
			this.publishCommand = publishCommand;
			this.groups = groups;
			this.fences = new long[id.size()];
		}

		CompletableFuture<Attempt> from(int index) {
			if (index == this.groups.size()) {
				return CompletableFuture.completedFuture(Attempt.acquired(this.fences));
			}
			Map.Entry<Integer, List<Integer>> group = this.groups.get(index);
			List<String> keys = new ArrayList<>();
			group.getValue().forEach((key) -> keys.add(stored(this.id.keys().get(key))));
			List<String> scriptKeys = new ArrayList<>(keys);
			keys.forEach((key) -> scriptKeys.add(fenceKey(group.getKey())));
			scriptKeys.addAll(this.queueKeys);
			return ClusterBackend.this.commands
				.<List<Long>>evalBounded((keys.size() == 1) ? LockCommands.ACQUIRE : LockCommands.ACQUIRE_ALL,
						scriptKeys, this.args, "acquire " + keys)
				.thenCompose((reply) -> {
					if (reply.get(0) != 1L) {
						rollback(this.acquired, this.owner, this.publishCommand);
						if (this.id.size() == 1 && reply.size() > 3) {
							return CompletableFuture.completedFuture(Attempt.held(reply.get(1), 0, reply.get(3)));
						}
						int blocking = (reply.size() > 2) ? reply.get(2).intValue() : 0;
						return CompletableFuture
							.completedFuture(Attempt.held(reply.get(1), group.getValue().get(blocking)));
					}
					this.acquired.add(keys);
					for (int i = 0; i < group.getValue().size(); i++) {
						this.fences[group.getValue().get(i)] = reply.get(i + 1);
					}
					if (this.id.size() == 1 && reply.size() > 2) {
						return CompletableFuture.completedFuture(Attempt.acquired(this.fences, reply.get(2)));
					}
					return from(index + 1);
				});
		}

	}

	private void rollback(List<List<String>> acquired, String owner, String publishCommand) {
		for (List<String> keys : acquired) {
			this.commands.evalAsync(LockCommands.RELEASE, keys, List.of(owner, "", publishCommand));
		}
	}

	@Override
	public CompletableFuture<long[]> renew(List<Renewal> renewals) {
		// one script per slot, all sent at once
		Map<Integer, List<String>> keys = new LinkedHashMap<>();
		Map<Integer, List<String>> args = new LinkedHashMap<>();
		Map<Integer, List<Integer>> owners = new LinkedHashMap<>();
		for (int r = 0; r < renewals.size(); r++) {
			Renewal renewal = renewals.get(r);
			for (String key : renewal.id().keys()) {
				int slot = SlotTags.slot(key);
				keys.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(stored(key));
				List<String> slotArgs = args.computeIfAbsent(slot, (s) -> new ArrayList<>());
				slotArgs.add(renewal.owner());
				slotArgs.add(Long.toString(renewal.leaseMillis()));
				owners.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(r);
			}
		}
		long[] granted = new long[renewals.size()];
		java.util.Arrays.fill(granted, Long.MAX_VALUE);
		List<CompletableFuture<Void>> calls = new ArrayList<>();
		for (Integer slot : owners.keySet()) {
			List<Integer> slotOwners = owners.get(slot);
			calls.add(this.commands.<List<Long>>evalAsync(LockCommands.RENEW, keys.get(slot), args.get(slot))
				.thenAccept((replies) -> {
					synchronized (granted) {
						for (int i = 0; i < replies.size(); i++) {
							int r = slotOwners.get(i);
							long reply = replies.get(i);
							granted[r] = (reply == 0 || granted[r] == 0) ? 0 : Math.min(granted[r], reply);
						}
					}
				}));
		}
		return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply((done) -> {
			synchronized (granted) {
				return granted.clone();
			}
		});
	}

	@Override
	public int release(LockId id, String owner) {
		int deleted = 0;
		for (List<Integer> group : bySlot(id.keys()).values()) {
			List<String> keys = group.stream().map((index) -> id.keys().get(index)).toList();
			Long count = this.commands.eval(LockCommands.RELEASE, releaseKeys(keys), releaseArgs(owner, false),
					"release " + keys);
			deleted += count.intValue();
		}
		return deleted;
	}

	@Override
	public int keep(LockId id, String owner, long ttlMillis) {
		int kept = 0;
		for (List<Integer> group : bySlot(id.keys()).values()) {
			List<String> keys = group.stream().map((index) -> stored(id.keys().get(index))).toList();
			Long count = this.commands.eval(LockCommands.KEEP, keys, List.of(owner, Long.toString(ttlMillis)),
					"keep " + keys + " until its minimum hold passes");
			kept += count.intValue();
		}
		return kept;
	}

	@Override
	public void releaseQuietly(LockId id, String owner) {
		releaseAsync(id, owner, false);
	}

	@Override
	public int check(LockId id, String owner) {
		int held = 0;
		for (List<Integer> group : bySlot(id.keys()).values()) {
			List<String> keys = group.stream().map((index) -> stored(id.keys().get(index))).toList();
			Long count = this.commands.eval(LockCommands.CHECK, keys, List.of(owner), "check " + keys);
			held += count.intValue();
		}
		return held;
	}

	@Override
	public long remainingLease(String key) {
		return this.commands.pttl(stored(key));
	}

	@Override
	public Duration commandTimeout() {
		return this.commands.timeout();
	}

	/**
	 * SPUBLISH from Redis 7 (sharded: only the slot's node and its replicas), else
	 * PUBLISH; decided once, on first use, from the server's version.
	 */
	String publishCommand() {
		String current = this.publish;
		if (current != null) {
			return current;
		}
		// asked outside the lock: a caller that waits (bounded) for Redis never holds up
		// the others
		String version = this.commands.serverVersion();
		synchronized (this) {
			if (this.publish == null) {
				boolean sharded = Integer.parseInt(version.split("\\.")[0]) >= 7;
				this.channel.sharded(sharded);
				this.publish = sharded ? "SPUBLISH" : "PUBLISH";
				if (sharded) {
					logger.info("Redis Cluster {}: release notifications use sharded pub/sub", version);
				}
				else {
					logger.warn("Redis Cluster {} has no sharded pub/sub (Redis 7+): release notifications fall back "
							+ "to PUBLISH/SUBSCRIBE, which the Cluster broadcasts to every node", version);
				}
			}
			return this.publish;
		}
	}

	@Override
	public void prepareListening() {
		try {
			publishCommand();
		}
		catch (LockException ex) {
			logger.debug("Could not ask Redis for its version yet: {}", ex.getMessage());
			return;
		}
		this.channel.prepare();
	}

	@Override
	public CompletableFuture<?> listen(String key) {
		return (this.publish != null) ? this.channel.subscribe(stored(key)) : CompletableFuture.completedFuture(null);
	}

	@Override
	public void awaitListening(CompletableFuture<?> listening) {
		this.channel.await(listening);
	}

	@Override
	public void unlisten(String key) {
		this.channel.unsubscribe(stored(key));
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.channel.onRelease((stored) -> listener.accept(logical(stored)));
	}

	@Override
	public boolean notifies() {
		return this.channel.notifies();
	}

	@Override
	public void close() {
		this.channel.close();
		this.commands.close();
	}

}
