package io.lockstep.internal.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.engine.LockStore.Renewal;
import io.lockstep.internal.engine.LockStore.Successor;
import io.lockstep.internal.engine.Sharing;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The one place that knows the Lua scripts' keys, arguments and replies (their contracts
 * are at the top of each {@code .lua} file): it turns the store's requests into script
 * calls and the scripts' replies into answers.
 */
public final class LockScripts {

	private LockScripts() {
	}

	public static final RedisScript<List> ACQUIRE = ScriptTexts.of(List.class, "acquire-plain", "lib", "lib-acquire",
			"acquire");

	public static final RedisScript<List> ACQUIRE_ALL = ScriptTexts.of(List.class, "lib", "lib-acquire", "acquire-all");

	/** Read locks and semaphores: one key, one of several holders. */
	public static final RedisScript<List> ACQUIRE_SHARED = ScriptTexts.of(List.class, "lib", "lib-acquire",
			"lib-shared", "lib-queue", "acquire-shared");

	/** Releases with hand-offs to the keys' queued waiters. */
	public static final RedisScript<Long> RELEASE = ScriptTexts.of(Long.class, "release-plain", "lib", "lib-shared",
			"lib-queue", "lib-release", "release");

	/** A waiter gives up: it leaves the queues, and releases what it was handed. */
	public static final RedisScript<Long> LEAVE = ScriptTexts.of(Long.class, "lib", "lib-shared", "lib-queue",
			"lib-release", "leave");

	/**
	 * Releases without hand-offs: undoing a failed attempt, Redlock's nodes, a store
	 * without hand-offs.
	 */
	public static final RedisScript<Long> DELETE = ScriptTexts.of(Long.class, "lib", "lib-shared", "lib-queue",
			"lib-release", "delete");

	public static final RedisScript<List> RENEW = ScriptTexts.of(List.class, "lib", "lib-shared", "renew");

	public static final RedisScript<Long> KEEP = ScriptTexts.of(Long.class, "lib", "lib-shared", "keep");

	public static final RedisScript<Long> CHECK = ScriptTexts.of(Long.class, "lib", "lib-shared", "check");

	/** Redlock only: raises the fencing counters of held keys to the lock's tokens. */
	public static final RedisScript<Long> RAISE_FENCE = ScriptTexts.of(Long.class, "lib", "raise-fence");

	/** {@code lib-release.lua}'s notification when none is given. */
	private static final String RELEASED = "released";

	/** {@code lib-release.lua}'s publish command when none is given. */
	private static final String PUBLISH = "PUBLISH";

	/** {@code acquire.lua}'s max hold when none is given (ARGV[4]). */
	private static final String NO_MAX_HOLD = "0";

	/**
	 * {@code acquire.lua}'s wait when none is given (ARGV[3]): the caller does not wait.
	 */
	private static final String NO_WAIT = "";

	/** {@code acquire.lua}'s lock delay when none is given (ARGV[5]). */
	private static final String NO_DELAY = "0";

	/** An acquire script's reply, first element: acquired, with the fencing tokens. */
	public static final int ACQUIRED = 1;

	/** An acquire script's reply, first element: held by another owner, wait. */
	public static final int HELD = 0;

	/**
	 * {@code acquire-all.lua}'s reply for Redlock: the node does not persist its data.
	 */
	public static final int NO_PERSISTENCE = -1;

	/** An acquire script's reply, first element: the key holds another kind of lock. */
	public static final int OTHER_KIND = -2;

	/**
	 * {@code renew.lua}'s reply for a key: gone, another owner's, or in its lock delay.
	 */
	public static final int LOST = 0;

	/** {@code renew.lua}'s reply for a key: its max-hold cap allows no extension. */
	public static final int CAPPED = -1;

	/**
	 * Reads the scripts now, on the thread that builds a store, not on a first caller's.
	 */
	public static void load() {
		// the static fields above are read once the class is initialized
	}

	/** The lock as messages name it. */
	public static String quoted(LockId id) {
		return "'" + id.display() + "'";
	}

	/**
	 * One script call: what it runs, on which keys, with which arguments, and how a
	 * message names it ({@code description}, worked out only when a message needs it).
	 */
	public record Call(RedisScript<?> script, List<String> keys, List<String> args, Supplier<String> description) {

		/** How a message names the call ("release 'k'"). */
		public String what() {
			return this.description.get();
		}

	}

	/**
	 * Acquires keys of one group ({@code acquire.lua} for one key, else
	 * {@code acquire-all.lua}); a one-key lock's waiter also marks the key as waited for
	 * and, with {@code handOff}, queues itself for a hand-off on its channel.
	 * @param stored the stored keys
	 * @param fences the fencing counter of each
	 * @param waiter for a one-key lock whose caller waits, or a reader: its queue, table
	 * and hand-off channel (a reader only looks for writers queued there); else
	 * {@code null}
	 */
	public static Call acquire(Acquire request, List<String> stored, List<String> fences, QueueKeys waiter,
			boolean handOff) {
		// room for the queue and table of a waiter
		List<String> keys = new ArrayList<>(stored.size() + fences.size() + 2);
		keys.addAll(stored);
		keys.addAll(fences);
		Sharing sharing = request.id().sharing();
		if (!sharing.exclusive()) {
			return acquireShared(request, keys, waiter, handOff);
		}
		if (stored.size() > 1) {
			return acquireAll(request, stored, fences, null);
		}
		String wait = NO_WAIT;
		if (waiter != null) {
			keys.add(waiter.queue());
			keys.add(waiter.table());
			// a queued waiter's mode, entry life, hand-off lease and channel as one
			// argument (acquire.lua's ARGV[3]); what follows the mode's letter is read
			// only when the key is held
			String mode = waitMode(request, handOff);
			wait = (mode.equals("q") || mode.equals("n"))
					? mode + ":" + request.entryMillis() + ":" + request.handOffMillis() + ":" + waiter.channel()
					: mode;
		}
		List<String> args = withoutDefaults(List.of(request.owner(), Long.toString(request.leaseMillis()), wait,
				millis(request.maxHoldMillis()), millis(request.delayMillis())), 2, NO_WAIT, NO_MAX_HOLD, NO_DELAY);
		return new Call(ACQUIRE, keys, args, () -> "acquire '" + request.id().display() + "'");
	}

	/**
	 * The keys of a lock on several keys that live in one group
	 * ({@code acquire-all.lua}), also when the group holds one of them: a writer on each
	 * key. A caller that waits marks the keys held by readers in their waiter tables, so
	 * that readers that come after it wait behind it.
	 * @param stored the stored keys of the group
	 * @param fences the fencing counter of each
	 * @param tables the waiter table of each, or {@code null} for a caller that does not
	 * wait
	 */
	public static Call acquireAll(Acquire request, List<String> stored, List<String> fences,
			@Nullable List<String> tables) {
		List<String> keys = new ArrayList<>(stored);
		keys.addAll(fences);
		List<String> args = new ArrayList<>(
				List.of(request.owner(), Long.toString(request.leaseMillis()), Long.toString(request.maxHoldMillis())));
		boolean marks = tables != null && request.waits();
		if (marks) {
			keys.addAll(tables);
		}
		if (marks || request.delayMillis() > 0) {
			args.addAll(List.of("", marks ? Long.toString(request.entryMillis()) : "0",
					Long.toString(request.delayMillis())));
		}
		return new Call(ACQUIRE_ALL, keys, args, () -> "acquire '" + request.id().display() + "'");
	}

	/**
	 * A read lock or a permit ({@code acquire-shared.lua}), queued as for a one-key lock.
	 */
	private static Call acquireShared(Acquire request, List<String> keys, QueueKeys waiter, boolean handOff) {
		Sharing sharing = request.id().sharing();
		String kind = sharing.read() ? "r" : "s" + sharing.permits();
		List<String> args = new ArrayList<>(List.of(request.owner(), Long.toString(request.leaseMillis()),
				Long.toString(request.maxHoldMillis()), kind, waitMode(request, handOff)));
		if (waiter != null) {
			keys.add(waiter.queue());
			keys.add(waiter.table());
			args.addAll(List.of(Long.toString(request.entryMillis()), waiter.channel(),
					Long.toString(request.handOffMillis())));
		}
		else if (request.delayMillis() > 0) {
			args.addAll(List.of("0", "", Long.toString(request.handOffMillis())));
		}
		if (request.delayMillis() > 0) {
			args.add(Long.toString(request.delayMillis()));
		}
		return new Call(ACQUIRE_SHARED, keys, args,
				() -> "acquire " + sharing.describe() + " of '" + request.id().display() + "'");
	}

	/** A time in ms as an argument; none ({@code 0}) without making a string. */
	private static String millis(long value) {
		return (value == 0) ? "0" : Long.toString(value);
	}

	/** The scripts' wait mode: none, w (mark), n (queue) or q (queue again). */
	private static String waitMode(Acquire request, boolean handOff) {
		return !request.waits() ? "" : !handOff ? "w" : request.queued() ? "q" : "n";
	}

	/** A one-key lock's waiter: its queue, table and client's hand-off channel. */
	public record QueueKeys(String queue, String table, String channel) {
	}

	/**
	 * Reads an acquire reply for keys of one group.
	 * @param reply the script's reply
	 * @param indexes the index in the lock of each key of the group
	 * @param fences the lock's fencing tokens, in key order: the group's are written in
	 * @param request the attempt, for messages
	 * @return acquired (with {@code fences}) or held (naming the first key held by
	 * another owner by its index in the lock)
	 * @throws LockException when the key is held another way (a semaphore of another
	 * number of permits, a read lock for a semaphore, ...): nothing was acquired
	 */
	public static Attempt readAcquire(List<Long> reply, List<Integer> indexes, long[] fences, Acquire request) {
		if (reply.size() == 1) {
			if (reply.get(0) > ACQUIRED) {
				// acquire-plain.lua's bare fencing token (always above 1), which the
				// MULTI output reads as a one-element list: acquired, as {ACQUIRED,
				// fence}
				fences[indexes.get(0)] = reply.get(0);
				return Attempt.acquired(fences);
			}
			// {OTHER_KIND, permits} cut short by Redis at a nil: permitsOf (lib.lua) read
			// a kind that no Lockstep lock writes
			throw new LockException("Lock '" + request.id().display()
					+ "' is held as a kind of lock that is neither exclusive, nor read/write, nor a semaphore "
					+ "(a value Lockstep did not write): nothing was acquired");
		}
		if (reply.get(0) == OTHER_KIND) {
			int permits = reply.get(1).intValue();
			Sharing held = (permits == 0) ? Sharing.READ : Sharing.permits(permits);
			throw held.refuses(request.id().sharing(), "Lock '" + request.id().display() + "'");
		}
		if (reply.get(0) == ACQUIRED) {
			for (int i = 0; i < indexes.size(); i++) {
				fences[indexes.get(i)] = reply.get(i + 1);
			}
			// acquire.lua also tells the lease it set on a key that was the owner's
			// already
			return (fences.length == 1 && reply.size() > 2) ? Attempt.acquired(fences, reply.get(2))
					: Attempt.acquired(fences);
		}
		if (fences.length == 1 && reply.size() > 3) {
			return Attempt.held(reply.get(1), 0, reply.get(3));
		}
		int blocking = (reply.size() > 2) ? reply.get(2).intValue() : 0;
		return Attempt.held(reply.get(1), indexes.get(blocking));
	}

	/**
	 * Releases keys of one group of the lock {@code id} (which names it in messages):
	 * compare-and-delete, publishing a notification with {@code publish}
	 * ({@code delete.lua}), or, with {@code queues}, handing each key to its first queued
	 * waiter ({@code release.lua}; {@code leave.lua} for a waiter that gives up).
	 * @param queues with hand-offs: the keys' queues, tables and fencing counters, each
	 * in key order; else {@code null}
	 * @param leave whether the owner also leaves the queues (a waiter that gives up)
	 */
	public static Call release(LockId id, List<String> stored, String owner, String publish, Queues queues,
			boolean leave) {
		if (queues == null) {
			return new Call(DELETE, stored, releaseArgs(owner, RELEASED, publish), () -> "release " + quoted(id));
		}
		List<String> keys = new ArrayList<>(4 * stored.size());
		keys.addAll(stored);
		keys.addAll(queues.queues());
		keys.addAll(queues.tables());
		keys.addAll(queues.fences());
		return new Call(leave ? LEAVE : RELEASE, keys, releaseArgs(owner, RELEASED, publish),
				() -> "release " + quoted(id));
	}

	/**
	 * A release with hand-offs of one key ({@link #release}) that names a successor
	 * ({@code release-plain.lua}'s case 1): its reply is the fencing token negated when
	 * the key was handed to it.
	 */
	public static Call naming(Call release, Successor successor) {
		List<String> args = new ArrayList<>(release.args());
		if (args.size() == 1) {
			// the defaults left out, before the successor's arguments
			args.add(RELEASED);
			args.add(PUBLISH);
		}
		args.add(successor.owner());
		args.add(Long.toString(successor.leaseMillis()));
		return new Call(release.script(), release.keys(), args, release.description());
	}

	/**
	 * The ARGV of a release script ({@code lib-release.lua}): the owner token, the
	 * notification and the publish command, without the script's defaults at its end
	 * ({@value #RELEASED}, {@value #PUBLISH}: what a release on a Redis that is not a
	 * Cluster sends).
	 */
	private static List<String> releaseArgs(String owner, String message, String publish) {
		return withoutDefaults(List.of(owner, message, publish), 1, RELEASED, PUBLISH);
	}

	/**
	 * A script's ARGV without the trailing arguments that are the script's defaults
	 * anyway: {@code defaults} are those of the arguments from {@code first} (0-based)
	 * on. Redis pays for every argument of every call, about 1,350 instructions each to
	 * read it and hand it to Lua (counted with callgrind, {@code docs/benchmarks.md}).
	 */
	private static List<String> withoutDefaults(List<String> args, int first, String... defaults) {
		int size = args.size();
		while (size > first && args.get(size - 1).equals(defaults[size - 1 - first])) {
			size--;
		}
		return (size == args.size()) ? args : args.subList(0, size);
	}

	/**
	 * The waiter queues of released keys: each key's queue, table and fencing counter.
	 */
	public record Queues(List<String> queues, List<String> tables, List<String> fences) {
	}

	/**
	 * Undoes keys of one group acquired by an attempt that did not get them all: deletes
	 * them, waking nobody and handing nothing off (the lock was never free for others).
	 */
	public static Call undo(LockId id, List<String> stored, String owner, String publish) {
		return new Call(DELETE, stored, releaseArgs(owner, "", publish), () -> undoing(id));
	}

	/** How a message names the undo of a lock's attempt ("undo 'k'"). */
	public static String undoing(LockId id) {
		return "undo " + quoted(id);
	}

	/** Leaves keys of one group to expire {@code ttlMillis} from now. */
	public static Call keep(LockId id, List<String> stored, String owner, long ttlMillis) {
		return new Call(KEEP, stored, List.of(owner, Long.toString(ttlMillis)),
				() -> "keep " + quoted(id) + " until its minimum hold passes");
	}

	/** Counts the keys of one group that hold the owner's token. */
	public static Call check(LockId id, List<String> stored, String owner) {
		return new Call(CHECK, stored, List.of(owner), () -> "check " + quoted(id));
	}

	/**
	 * Renews keys of one group, each with its owner and lease.
	 * @param owners the owner of each key
	 * @param leases the lease of each key, in ms
	 */
	public static Call renew(List<String> stored, List<String> owners, List<Long> leases) {
		List<String> args = new ArrayList<>();
		for (int i = 0; i < stored.size(); i++) {
			args.add(owners.get(i));
			args.add(Long.toString(leases.get(i)));
		}
		return new Call(RENEW, stored, args, () -> "renew " + stored.size() + " leases");
	}

	/**
	 * Reads renew replies: per renewal, the least lease granted over its keys,
	 * {@link #LOST} when any key is gone or another owner's, {@link #CAPPED} when the cap
	 * allows no extension.
	 * @param renewalOf the renewal of each key, in key order
	 * @param groups the key indexes each call renewed
	 * @param replies each call's reply, in the order of its keys
	 */
	public static long[] readRenewals(int renewals, List<Integer> renewalOf, List<List<Integer>> groups,
			List<List<Long>> replies) {
		long[] granted = new long[renewals];
		java.util.Arrays.fill(granted, Long.MAX_VALUE);
		for (int g = 0; g < groups.size(); g++) {
			for (int i = 0; i < replies.get(g).size(); i++) {
				int r = renewalOf.get(groups.get(g).get(i));
				long reply = replies.get(g).get(i);
				granted[r] = (reply == LOST || granted[r] == LOST) ? LOST : Math.min(granted[r], reply);
			}
		}
		return granted;
	}

	/** Renews every key of the renewals in one script (one node, no groups). */
	public static Call renew(List<Renewal> renewals) {
		List<String> keys = new ArrayList<>();
		List<String> owners = new ArrayList<>();
		List<Long> leases = new ArrayList<>();
		for (Renewal renewal : renewals) {
			for (String key : renewal.id().keys()) {
				keys.add(key);
				owners.add(renewal.owner());
				leases.add(renewal.leaseMillis());
			}
		}
		return renew(keys, owners, leases);
	}

	/** Reads the reply of {@link #renew(List)}: per renewal, as {@link #readRenewals}. */
	public static long[] readRenewals(List<Renewal> renewals, List<Long> reply) {
		List<Integer> renewalOf = new ArrayList<>();
		for (int r = 0; r < renewals.size(); r++) {
			for (int k = 0; k < renewals.get(r).id().size(); k++) {
				renewalOf.add(r);
			}
		}
		List<Integer> all = new ArrayList<>();
		for (int i = 0; i < renewalOf.size(); i++) {
			all.add(i);
		}
		return readRenewals(renewals.size(), renewalOf, List.of(all), List.of(reply));
	}

	/**
	 * Releases keys on a Redlock node, publishing {@code message} as the notification
	 * (the same on every node, so that a waiter is woken once).
	 */
	public static Call release(LockId id, List<String> keys, String owner, String message) {
		return new Call(DELETE, keys, releaseArgs(owner, message, PUBLISH), () -> "release " + quoted(id));
	}

	/** Whether a message on a client's own channel is a hand-off. */
	public static boolean isHandOff(String message) {
		return message.startsWith("g:");
	}

	/**
	 * Reads a hand-off message, {@code "g:<owner>:<fence>:<lease ms>:<key>"}, or
	 * {@code null} when it is malformed.
	 */
	public static HandOff readHandOff(String message) {
		String[] parts = message.split(":", 5);
		if (parts.length != 5) {
			return null;
		}
		return new HandOff(parts[4], parts[1], Long.parseLong(parts[2]), Long.parseLong(parts[3]));
	}

	/**
	 * A hand-off: the key now holds the owner's token with a fresh lease.
	 *
	 * @param key the stored key
	 * @param owner the waiter's owner token
	 * @param fencingToken the lock's new fencing token
	 * @param leaseMillis the lease the key was given
	 */
	public record HandOff(String key, String owner, long fencingToken, long leaseMillis) {
	}

}
