package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.Retried;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The restart rule: nodes must persist their data. A node without {@code appendonly yes}
 * takes no part in locks, and a lock survives a crash and restart of a majority of its
 * nodes. The control shows what the rule prevents: with nodes that restart empty, a
 * second client gets the lock while the first still holds it.
 */
@RedisTest
class RedlockRestartTests {

	private static final Duration LEASE = Duration.ofSeconds(5);

	@Test
	void nodesThatDoNotPersistTakeNoPartInLocks(RedisFixture fixture) {
		List<RedisNode> volatileNodes = fixture.masters(3);
		List<RedisNode> persistent = RedlockNodes.persistent(fixture, 2);
		List<RedisNode> nodes = new ArrayList<>(volatileNodes);
		nodes.addAll(persistent);
		try (RedisLockTemplate locks = template(nodes, true)) {
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("ledger"))
				.satisfies((ex) -> System.out.printf("Redlock, 3 of 5 nodes without appendonly: %s%n", ex.getMessage()))
				.withMessageContaining("3 of 5 nodes refused: no persistence")
				.withMessageContaining("2 took part, a quorum is 3")
				.withMessageContaining(volatileNodes.get(0).uri() + ": refused, it does not persist its data");
			await("lock key left behind").atMost(Duration.ofSeconds(5))
				.until(() -> nodes.stream().noneMatch((node) -> RedlockNodes.has(node, "lockstep:ledger")));
		}
		// with 2 of 5 not persisting, the 3 that do are a quorum, and only they vote
		List<RedisNode> mostlyPersistent = new ArrayList<>(volatileNodes.subList(0, 2));
		mostlyPersistent.addAll(persistent);
		mostlyPersistent.add(RedlockNodes.persistent(fixture, 1).get(0));
		try (RedisLockTemplate locks = template(mostlyPersistent, true);
				LockHandle lock = locks.tryAcquire("ledger").orElseThrow()) {
			assertThat(mostlyPersistent).extracting((node) -> RedlockNodes.has(node, "lockstep:ledger"))
				.containsExactly(false, false, true, true, true);
			assertThat(lock.isHeld()).isTrue();
			// a quorum persists: healthy, though the 2 others are named at ERROR
			assertThat(locks.ping()).isPositive();
		}
	}

	/**
	 * Nodes without persistence are found when they first answer, before any lock: each
	 * named at ERROR, the health check failing with the reason; a lock is refused at
	 * once, worded as the refusal it is.
	 */
	@Test
	void nodesWithoutPersistenceAreNamedAtStartUpAndTheirRefusalIsWordedAsOne(RedisFixture fixture) {
		List<RedisNode> nodes = fixture.masters(5);
		Logger logger = (Logger) LoggerFactory.getLogger(Node.class);
		ListAppender<ILoggingEvent> appender = new ListAppender<>();
		appender.start();
		logger.addAppender(appender);
		try (RedisLockTemplate locks = template(nodes, true)) {
			assertThat(Eventually.holds(Duration.ofSeconds(10), () -> errors(appender).size() >= 5))
				.as("ERRORs before any lock: %s", errors(appender))
				.isTrue();
			List<String> errors = errors(appender);
			errors.forEach((error) -> System.out.printf("Redlock at start-up: %s%n", error));
			for (RedisNode node : nodes) {
				assertThat(errors).filteredOn((error) -> error.startsWith("Redlock node " + node.uri() + " "))
					.singleElement()
					.asString()
					.contains("does not persist its data");
			}
			assertThatExceptionOfType(LockException.class).isThrownBy(locks::ping)
				.satisfies((ex) -> System.out.printf("Redlock health: %s%n", ex.getMessage()))
				.withMessageStartingWith("Redlock cannot lock: 5 of 5 nodes refused: no persistence")
				.withMessageContaining(nodes.get(4).uri() + ": refused, it does not persist its data");
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("ledger"))
				.satisfies((ex) -> System.out.printf("Redlock lock in %d ms: %s%n",
						(System.nanoTime() - start) / 1_000_000, ex.getMessage()))
				.withMessageContaining("5 of 5 nodes refused: no persistence")
				.withMessageContaining("a quorum is 3")
				.withMessageNotContaining("answered");
			assertThat(errors(appender)).as("each node is named once").hasSize(5);
		}
		finally {
			logger.detachAppender(appender);
		}
	}

	/**
	 * A refusal that cannot change is not waited for: with a 30 s wait and a quorum of
	 * nodes without persistence, the call fails at its first attempt. Each attempt reads
	 * {@code INFO persistence} once inside the acquire script on every node, so the
	 * {@code INFO} calls of a refusing node count the attempts.
	 */
	@Test
	void aWaitingCallFailsAtOnceWhenAQuorumOfNodesDoesNotPersist(RedisFixture fixture) {
		List<RedisNode> volatileNodes = fixture.masters(3);
		List<RedisNode> nodes = new ArrayList<>(volatileNodes);
		nodes.addAll(RedlockNodes.persistent(fixture, 2));
		Duration commandTimeout = Duration.ofSeconds(1);
		try (RedisLockTemplate locks = template(nodes, true)) {
			// the start-up check (one INFO per node, sent as the nodes connect) comes
			// before the health check's, which the baseline waits for
			assertThat(catchThrowable(locks::ping)).isInstanceOf(LockException.class);
			long infoBefore = infoCalls(volatileNodes.get(0));
			long start = System.nanoTime();
			Throwable failure = catchThrowable(
					() -> locks.withWaitTime(Duration.ofSeconds(30)).execute("ledger", (lock) -> "ran"));
			long millis = (System.nanoTime() - start) / 1_000_000;
			// the INFO that read the count before is counted too
			long attempts = infoCalls(volatileNodes.get(0)) - infoBefore - 1;
			System.out.printf(
					"Redlock, 3 of 5 nodes without appendonly, wait time 30 s: failed in %d ms after %d "
							+ "attempt(s) (command timeout %d ms): %s%n",
					millis, attempts, commandTimeout.toMillis(), (failure != null) ? failure.getMessage() : null);
			assertThat(failure).isExactlyInstanceOf(LockException.class)
				.hasMessageContaining("Could not acquire lock 'lockstep:ledger'")
				.hasMessageContaining(volatileNodes.get(0).uri() + ": refused, it does not persist its data");
			assertThat(attempts).as("attempts").isEqualTo(1);
			assertThat(millis).isLessThan(commandTimeout.toMillis() + 2_000);
		}
	}

	/** The {@code INFO} commands the node ran, those of scripts included. */
	private static long infoCalls(RedisNode node) {
		String stat = node.info("commandstats").get("cmdstat_info");
		if (stat == null) {
			return 0;
		}
		String calls = stat.split(",")[0];
		return Long.parseLong(calls.substring(calls.indexOf('=') + 1));
	}

	@Test
	void aLockSurvivesACrashAndRestartOfAMajorityOfItsNodes(RedisFixture fixture) {
		List<RedisNode> nodes = fixture.masters(5, "--appendonly", "yes", "--appendfsync", "always");
		try (RedisLockTemplate first = template(nodes, true); RedisLockTemplate second = template(nodes, true)) {
			second.tryAcquire("warm-up").orElseThrow().close();
			LockHandle held = first.acquire("job");
			for (RedisNode node : nodes.subList(0, 3)) {
				node.restart(); // SIGKILL, then a new process on the same port and folder
			}
			assertThat(nodes.subList(0, 3)).allMatch((node) -> RedlockNodes.has(node, "lockstep:job"));
			Optional<LockHandle> other = Retried.call(() -> second.tryAcquire("job"), Duration.ofSeconds(10),
					Duration.ofMillis(20));
			System.out.printf("Redlock, 3 of 5 persistent nodes SIGKILLed and restarted while held: second client "
					+ "acquired: %s, first still holds: %s%n", other.isPresent(), held.isHeld());
			assertThat(other).as("a second owner got the lock").isEmpty();
			assertThat(held.isHeld()).isTrue();
			held.close(); // a quorum deleted it: no LockLostException
			assertThat(Retried.call(() -> second.tryAcquire("job"), Duration.ofSeconds(10), Duration.ofMillis(20)))
				.isPresent()
				.get()
				.satisfies(LockHandle::close);
		}
	}

	@Test
	void withoutTheRuleARestartedMajorityGrantsTheLockTwice(RedisFixture fixture) {
		List<RedisNode> nodes = fixture.masters(5);
		try (RedisLockTemplate first = template(nodes, false); RedisLockTemplate second = template(nodes, false)) {
			second.tryAcquire("warm-up").orElseThrow().close();
			long acquired = System.nanoTime();
			LockHandle held = first.acquire("job");
			for (RedisNode node : nodes.subList(0, 3)) {
				node.restart(); // starts empty
			}
			// the clients reconnect to the restarted nodes on their own; until all have,
			// an
			// attempt can see 2 holders, 2 free nodes and 1 error: no quorum either way
			Optional<LockHandle> other = untilAcquired(second, "job", acquired + LEASE.toNanos() / 2);
			long sinceFirstMillis = (System.nanoTime() - acquired) / 1_000_000;
			System.out.printf(
					"Redlock control (nodes without persistence, rule off): second client acquired %d ms "
							+ "after the first, within its %d ms lease: %s%n",
					sinceFirstMillis, LEASE.toMillis(), other.isPresent());
			assertThat(other).as("the hazard the rule prevents").isPresent();
			assertThat(sinceFirstMillis).isLessThan(LEASE.toMillis() / 2);
			other.get().close();
			try {
				held.close();
			}
			catch (LockLostException ex) {
				// expected: its keys on the restarted nodes were gone
			}
		}
	}

	/**
	 * {@code appendfsync everysec} (Redis's default) can lose the last second of
	 * acknowledged writes when a node's machine crashes: each such node is named in one
	 * WARN at its first vote; nodes with {@code appendfsync always} are not.
	 */
	@Test
	void aNodeThatSyncsItsAppendOnlyFileOnlyEverySecondIsWarnedAbout(RedisFixture fixture) {
		List<RedisNode> everySecond = fixture.masters(2, "--appendonly", "yes", "--appendfsync", "everysec");
		List<RedisNode> nodes = new ArrayList<>(everySecond);
		nodes.addAll(fixture.masters(3, "--appendonly", "yes", "--appendfsync", "always"));
		Logger logger = (Logger) LoggerFactory.getLogger(Node.class);
		ListAppender<ILoggingEvent> appender = new ListAppender<>();
		appender.start();
		logger.addAppender(appender);
		try (RedisLockTemplate locks = template(nodes, true)) {
			for (int i = 0; i < 3; i++) {
				locks.tryAcquire("fsync").orElseThrow().close();
			}
			assertThat(Eventually.holds(Duration.ofSeconds(5), () -> warnings(appender).size() >= 2))
				.as("warnings: %s", warnings(appender))
				.isTrue();
			List<String> warnings = warnings(appender);
			warnings.forEach((warning) -> System.out.printf("Redlock, appendfsync: %s%n", warning));
			assertThat(warnings).hasSize(2);
			for (int i = 0; i < nodes.size(); i++) {
				String name = nodes.get(i).uri();
				long naming = warnings.stream()
					.filter((warning) -> warning.startsWith("Redlock node " + name + " "))
					.count();
				assertThat(naming).as("warnings naming %s", name).isEqualTo((i < 2) ? 1 : 0);
			}
			assertThat(warnings.get(0)).contains("appendfsync everysec").contains("up to 1 s of acknowledged writes");
		}
		finally {
			logger.detachAppender(appender);
		}
	}

	private static List<String> errors(ListAppender<ILoggingEvent> appender) {
		return List.copyOf(appender.list)
			.stream()
			.filter((event) -> event.getLevel() == Level.ERROR)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private static List<String> warnings(ListAppender<ILoggingEvent> appender) {
		return List.copyOf(appender.list)
			.stream()
			.filter((event) -> event.getLevel() == Level.WARN)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private static RedisLockTemplate template(List<RedisNode> nodes, boolean requirePersistence) {
		return RedlockNodes.on(nodes)
			.nodeTimeout(Duration.ofMillis(300))
			.requirePersistence(requirePersistence)
			.builder()
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofSeconds(1))
			.build();
	}

	/**
	 * Tries until the lock is granted or the deadline ({@link System#nanoTime()}) passes.
	 */
	private static Optional<LockHandle> untilAcquired(RedisLockTemplate locks, String key, long deadline) {
		AtomicReference<Optional<LockHandle>> granted = new AtomicReference<>(Optional.empty());
		try {
			// a retry delay of 10 ms, on this thread: no attempt outlives the wait
			await().atMost(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))
				.pollInSameThread()
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(10))
				.until(() -> {
					try {
						granted.set(locks.tryAcquire(key));
					}
					catch (LockException ex) {
						// a node still refuses connections; try again
					}
					return granted.get().isPresent();
				});
		}
		catch (ConditionTimeoutException ex) {
			// not granted before the deadline
		}
		return granted.get();
	}

}
