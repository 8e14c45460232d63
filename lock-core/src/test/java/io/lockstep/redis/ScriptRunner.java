package io.lockstep.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.internal.redis.LockScripts.Call;
import io.lockstep.internal.redis.LockScripts.Queues;
import io.lockstep.test.RedisNode;

/**
 * The Lua scripts run on their own (EVALSHA) against one key {@code k}, its fencing
 * counter {@code fence}, waiter queue {@code q} and waiter table {@code t}: the set-up
 * the script tests share. Connects and empties the Redis; {@link #close} disconnects.
 */
final class ScriptRunner implements AutoCloseable {

	private final RedisNode redis;

	private final RedisClient client;

	private final LockCommands commands;

	ScriptRunner(RedisNode redis) {
		this.redis = redis;
		this.client = TestLocks.client(redis);
		this.commands = new LockCommands(this.client, Duration.ofSeconds(2));
		redis.call("FLUSHALL");
	}

	RedisClient client() {
		return this.client;
	}

	<T> T eval(Call call) {
		return this.commands.eval(call.script(), call.keys(), call.args(), call.description());
	}

	<T> T eval(org.springframework.data.redis.core.script.RedisScript<?> script, List<String> keys, List<String> args) {
		return this.commands.eval(script, keys, args, () -> "run a script");
	}

	/**
	 * {@code acquire.lua} without a queue: the one-key lock of a caller that does not
	 * wait.
	 */
	List<Long> acquire(String owner, String lease) {
		return eval(LockScripts.ACQUIRE, List.of("k", "fence"), List.of(owner, lease));
	}

	/** {@code acquire.lua} with the queue: {@code mode} '', 'w', 'n' or 'q'. */
	List<Long> acquire(String owner, long lease, long maxHold, String mode, long delay) {
		return eval(LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"),
				List.of(owner, Long.toString(lease),
						(mode.equals("q") || mode.equals("n")) ? mode + ":5000:" + lease + ":chan" : mode,
						Long.toString(maxHold), Long.toString(delay)));
	}

	/** A writer queued for a hand-off (a first attempt). */
	List<Long> queueWriter(String owner) {
		return eval(LockScripts.ACQUIRE, List.of("k", "fence", "q", "t"), List.of(owner, "30000", "n:5000:30000:chan"));
	}

	/**
	 * {@code acquire-shared.lua}: {@code kind} 'r' or 's<n>', {@code mode} as for
	 * acquire.
	 */
	List<Long> shared(String owner, long lease, String kind, String mode, long delay) {
		return eval(LockScripts.ACQUIRE_SHARED, List.of("k", "fence", "q", "t"), List.of(owner, Long.toString(lease),
				"0", kind, mode, "5000", "chan", Long.toString(lease), Long.toString(delay)));
	}

	/** A reader that marks the key when it must wait, not queued. */
	List<Long> read(String owner, long lease) {
		return eval(LockScripts.ACQUIRE_SHARED, List.of("k", "fence", "q", "t"),
				List.of(owner, Long.toString(lease), "0", "r", "w"));
	}

	/**
	 * {@code acquire-all.lua} on k alone with its waiter table: a writer that waits (mark
	 * 2 s).
	 */
	List<Object> writerOnSeveralKeys(String owner) {
		return eval(LockScripts.ACQUIRE_ALL, List.of("k", "fence", "t"), List.of(owner, "30000", "0", "", "2000", "0"));
	}

	private static Queues queues() {
		return new Queues(List.of("q"), List.of("t"), List.of("fence"));
	}

	/** A release with hand-offs ({@code release.lua}), as the store sends it. */
	long release(String owner) {
		return eval(LockScripts.release(LockId.of("k"), List.of("k"), owner, "PUBLISH", queues(), false));
	}

	/**
	 * A release naming a successor and its hand-off lease ({@code release.lua}), as the
	 * store sends it: the fencing token negated when the key was handed to it.
	 */
	long releaseTo(String owner, String successor, long leaseMillis) {
		return eval(
				LockScripts.naming(LockScripts.release(LockId.of("k"), List.of("k"), owner, "PUBLISH", queues(), false),
						new LockStore.Successor(successor, leaseMillis, (fence) -> {
						})));
	}

	/** A waiter that gives up ({@code leave.lua}), as the store sends it. */
	long leave(String owner) {
		return eval(LockScripts.release(LockId.of("k"), List.of("k"), owner, "PUBLISH", queues(), true));
	}

	/** A release without hand-offs ({@code delete.lua}), as the store sends it. */
	long releaseWithoutHandOffs(String owner) {
		return eval(LockScripts.release(LockId.of("k"), List.of("k"), owner, "PUBLISH", null, false));
	}

	long renew(String owner, long lease) {
		List<Long> reply = eval(LockScripts.renew(List.of("k"), List.of(owner), List.of(lease)));
		return reply.get(0);
	}

	long check(String owner) {
		return eval(LockScripts.check(LockId.of("k"), List.of("k"), owner));
	}

	long keep(String owner, long millis) {
		return eval(LockScripts.keep(LockId.of("k"), List.of("k"), owner, millis));
	}

	String value() {
		return (String) this.redis.call("GET", "k");
	}

	long pttl() {
		return (Long) this.redis.call("PTTL", "k");
	}

	@Override
	public void close() {
		this.commands.close();
		this.client.shutdown();
	}

}
