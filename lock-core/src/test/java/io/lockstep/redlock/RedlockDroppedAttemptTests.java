package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.lockstep.LockHandle;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redlock attempt ends however it ends (cancelled, interrupted, granted) with nothing
 * of it left to run after what follows it. Each node has every script cached but the
 * acquire's, so the attempt's {@code EVALSHA} is refused {@code NOSCRIPT} and would be
 * sent again with its text one round trip later, after the undo or the release that
 * follows it: the key would then be held for a whole lease by a token nobody holds.
 */
@RedisTest
class RedlockDroppedAttemptTests {

	private static final List<RedisScript<?>> ALL_BUT_ACQUIRE = List.of(LockScripts.RELEASE, LockScripts.LEAVE,
			LockScripts.DELETE, LockScripts.RENEW, LockScripts.KEEP, LockScripts.CHECK, LockScripts.RAISE_FENCE);

	private static final int ROUNDS = 5;

	/**
	 * A reactive acquisition cancelled while its attempt waits for the paused nodes: the
	 * store drops the attempt's commands before the cancel's undo.
	 */
	@Test
	void aReactiveAcquisitionCancelledWhileItsAttemptIsRefusedNoscriptLeavesNoKey(RedisFixture fixture)
			throws Exception {
		List<String> leftBehind = keysLeftAfterDroppedAttempts(fixture, "dropped-reactive-",
				"reactive acquisitions cancelled", (locks, key, unexpected) -> {
					Disposable subscription = ReactiveLocks.of(locks).execute(key, (lock) -> Mono.never()).subscribe();
					// the attempt is sent once a thread waits for its votes
					await().atMost(Duration.ofSeconds(5)).until(() -> waitingForVotes(null));
					subscription.dispose();
				});
		assertThat(leftBehind).isEmpty();
	}

	/**
	 * A blocking acquisition interrupted while its attempt waits for the paused nodes: it
	 * fails, and its undo follows the attempt's dropped commands.
	 */
	@Test
	void anAcquisitionInterruptedWhileItsAttemptIsRefusedNoscriptLeavesNoKey(RedisFixture fixture) throws Exception {
		List<String> leftBehind = keysLeftAfterDroppedAttempts(fixture, "dropped-interrupted-",
				"acquisitions interrupted", (locks, key, unexpected) -> {
					Thread caller = new Thread(() -> {
						try (LockHandle held = locks.acquire(key)) {
							unexpected.add(key + " (acquired)");
						}
						catch (RuntimeException ex) {
							// interrupted, as it should be
						}
					});
					caller.start();
					await().atMost(Duration.ofSeconds(5)).until(() -> waitingForVotes(caller));
					caller.interrupt();
					caller.join(5_000);
					assertThat(caller.isAlive()).isFalse();
				});
		assertThat(leftBehind).isEmpty();
	}

	/** Drops one acquisition's attempt of {@code key} while every node is paused. */
	@FunctionalInterface
	private interface DropAttempt {

		/**
		 * @param unexpected where to add what went wrong other than a key left held
		 */
		void drop(RedisLockTemplate locks, String key, List<String> unexpected) throws Exception;

	}

	/**
	 * {@link #ROUNDS} rounds on 3 nodes that have every script cached but the acquire's,
	 * each paused while {@code drop} drops an acquisition's attempt of a key of its own.
	 * @return the keys still held after any retry of their attempt, and what {@code drop}
	 * found amiss
	 */
	private static List<String> keysLeftAfterDroppedAttempts(RedisFixture fixture, String prefix, String what,
			DropAttempt drop) throws Exception {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		try (RedisLockTemplate locks = RedlockNodes.on(nodes).builder().leaseTime(Duration.ofSeconds(30)).build()) {
			locks.acquire("warm-up").close();
			List<String> leftBehind = new ArrayList<>();
			for (int round = 0; round < ROUNDS; round++) {
				String key = prefix + round;
				flushAllButAcquire(nodes);
				nodes.forEach((node) -> node.call("CLIENT", "PAUSE", "100", "ALL"));
				drop.drop(locks, key, leftBehind);
				if (heldAfterAnyRetry(locks, key)) {
					leftBehind.add(key);
				}
			}
			System.out.printf("Redlock: %s while their attempt was refused NOSCRIPT: %d of %d left their key held %s%n",
					what, leftBehind.size(), ROUNDS, leftBehind);
			return leftBehind;
		}
	}

	/**
	 * A lock granted by two nodes while the third, paused, refuses the attempt NOSCRIPT,
	 * and released at once: the release reaches the third node before the attempt's retry
	 * would.
	 */
	@Test
	void aLockReleasedAtOnceLeavesNoKeyOnANodeThatRefusedItsAttemptNoscript(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		RedisNode slow = nodes.get(2);
		try (RedisLockTemplate locks = RedlockNodes.on(nodes).builder().leaseTime(Duration.ofSeconds(30)).build()) {
			locks.acquire("warm-up").close();
			List<String> leftBehind = new ArrayList<>();
			for (int round = 0; round < ROUNDS; round++) {
				String key = "dropped-released-" + round;
				flushAllButAcquire(List.of(slow));
				slow.call("CLIENT", "PAUSE", "100", "ALL");
				locks.acquire(key).close();
				// answered once the pause is over; a retry of the attempt would come
				// within a round trip of the node's NOSCRIPT, far less than 300 ms
				slow.call("PING");
				if (!staysAbsent(slow, "lockstep:" + key, Duration.ofMillis(300))) {
					leftBehind.add(key);
					slow.call("DEL", "lockstep:" + key);
				}
			}
			System.out.printf("Redlock: locks released at once while a node refused their attempt NOSCRIPT: %d of %d "
					+ "left their key on it %s%n", leftBehind.size(), ROUNDS, leftBehind);
			assertThat(leftBehind).isEmpty();
		}
	}

	/** Whether the node does not have the key for the whole duration. */
	private static boolean staysAbsent(RedisNode node, String key, Duration duration) {
		try {
			await().during(duration).atMost(duration.multipliedBy(3)).until(() -> !RedlockNodes.has(node, key));
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

	/**
	 * Whether the key is held once any retry of the attempt has been sent: the first ask
	 * is answered after the nodes' answers to the attempt, on the same connections, so
	 * the second is asked after any retry.
	 */
	private static boolean heldAfterAnyRetry(RedisLockTemplate locks, String key) {
		locks.isLocked(key);
		return locks.isLocked(key);
	}

	/**
	 * Whether a thread ({@code null}: any other than this one) waits for the votes of
	 * Redlock's nodes.
	 */
	private static boolean waitingForVotes(Thread thread) {
		for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
			Thread candidate = entry.getKey();
			if ((thread != null) ? candidate != thread : candidate == Thread.currentThread()) {
				continue;
			}
			for (StackTraceElement frame : entry.getValue()) {
				if (frame.getClassName().equals(Acquisitions.class.getName())
						&& frame.getMethodName().startsWith("attempt")) {
					return candidate.getState() == Thread.State.TIMED_WAITING;
				}
			}
		}
		return false;
	}

	private static void flushAllButAcquire(List<RedisNode> nodes) {
		for (RedisNode node : nodes) {
			node.call("SCRIPT", "FLUSH");
			for (RedisScript<?> script : ALL_BUT_ACQUIRE) {
				node.call("SCRIPT", "LOAD", script.getScriptAsString());
			}
		}
	}

}
