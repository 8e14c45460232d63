package io.lockstep.internal.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.redis.LockScripts.Call;

/**
 * One attempt over the groups of a lock's keys, in group order: waited for on the
 * caller's thread ({@link #await}) or by the client's asynchronous API ({@link #from}).
 */
final class GroupAttempt {

	private final Acquire request;

	private final String publish;

	private final List<List<Integer>> groups;

	private final long[] fences;

	/** The stored keys of the groups acquired so far. */
	private final List<List<String>> acquired = new ArrayList<>();

	private final KeyLayout layout;

	private final LockCommands acquisitions;

	private final BiFunction<Acquire, List<Integer>, Call> script;

	private final Undo undo;

	/** Deletes the groups an attempt acquired; wakes nobody. */
	interface Undo {

		void undo(LockId id, List<List<String>> acquired, String owner, String publish);

	}

	/**
	 * @param acquisitions the connection of acquisitions and of what undoes them
	 * @param script the acquire script of a group of the lock's keys
	 */
	GroupAttempt(Acquire request, String publish, KeyLayout layout, LockCommands acquisitions,
			BiFunction<Acquire, List<Integer>, Call> script, Undo undo) {
		this.layout = layout;
		this.acquisitions = acquisitions;
		this.script = script;
		this.undo = undo;
		this.request = request;
		this.publish = publish;
		this.groups = layout.groups(request.id().keys());
		this.fences = new long[request.id().size()];
	}

	Acquire request() {
		return this.request;
	}

	String publish() {
		return this.publish;
	}

	List<List<String>> acquired() {
		return this.acquired;
	}

	/**
	 * The attempt on the caller's thread, group by group: each script is sent and its
	 * reply waited for there, at most the command timeout, so that no timer task is
	 * scheduled and cancelled per attempt (the caller waits with a deadline of its own).
	 * A failure or an interrupt ends it at once: no later group is sent, and a script
	 * still waiting for the connection is never sent. The caller undoes the groups
	 * {@link #acquired} when it throws.
	 */
	Attempt await() {
		Attempt attempt = null;
		for (List<Integer> group : this.groups) {
			Call call = this.script.apply(this.request, group);
			List<Long> reply = this.acquisitions.eval(call.script(), call.keys(), call.args(), call.what());
			attempt = LockScripts.readAcquire(reply, group, this.fences, this.request);
			if (!attempt.acquired()) {
				this.undo.undo(this.request.id(), this.acquired, this.request.owner(), this.publish);
				return attempt;
			}
			this.acquired.add(this.layout.stored(this.request.id().keys(), group));
		}
		return attempt;
	}

	/**
	 * The attempt by the client's asynchronous API, group by group from {@code index}:
	 * each script bounded by the command timeout.
	 */
	CompletableFuture<Attempt> from(int index) {
		List<Integer> group = this.groups.get(index);
		Call call = this.script.apply(this.request, group);
		// never blocks
		CompletableFuture<List<Long>> sent = this.acquisitions.evalBounded(call.script(), call.keys(), call.args(),
				call.what());
		return sent.thenCompose((reply) -> {
			Attempt attempt = LockScripts.readAcquire(reply, group, this.fences, this.request);
			if (!attempt.acquired()) {
				this.undo.undo(this.request.id(), this.acquired, this.request.owner(), this.publish);
				return CompletableFuture.completedFuture(attempt);
			}
			this.acquired.add(this.layout.stored(this.request.id().keys(), group));
			return (index + 1 == this.groups.size()) ? CompletableFuture.completedFuture(attempt) : from(index + 1);
		});
	}

}
