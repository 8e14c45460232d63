package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Lockstep under a least-privilege Redis ACL user: the {@code ACL SETUSER} command of
 * {@code docs/redis-acl.md}, read from that page and run as written, works on the Redis
 * the fixture starts (the embedded 6.2, or 7.x from PATH) and its rules are enough
 * (acquire, wait by notification, renew, release); without channel rights it falls back
 * to polling; without script rights it fails clearly; without any one rule it works or
 * fails naming Redis's refusal, and no key outlives its lease.
 */
@RedisTest
class AclTests {

	/** The rules of the documented command, for key prefix {@code lockstep:}. */
	static final String[] LEAST_PRIVILEGE = AclRecipe.rules().toArray(String[]::new);

	@Test
	void theDocumentedCommandRunsAsWrittenAndItsRulesAreEnough(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		List<String> command = AclRecipe.command();
		System.out.printf("The ACL command of docs/redis-acl.md on %s: %s%n", fixture.redisVersion(),
				String.join(" ", command));
		assertThat(redis.call(command.toArray(String[]::new))).isEqualTo("OK");
		RedisClient first = client(redis, AclRecipe.USER);
		RedisClient second = client(redis, AclRecipe.USER);
		try (RedisLockTemplate a = TestLocks.builder(first)
			.leaseTime(Duration.ofMillis(900))
			.commandTimeout(Duration.ofMillis(300))
			.build();
				RedisLockTemplate b = TestLocks.builder(second)
					.leaseTime(Duration.ofMillis(900))
					.commandTimeout(Duration.ofMillis(300))
					.build()) {
			LockHandle held = a.acquire("acl");
			CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = b.withWaitTime(Duration.ofSeconds(10)).acquire("acl")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(b).keysWaitedFor() == 1);
			Eventually.holds(Duration.ofMillis(700), () -> false); // renewed at least
																	// twice
			assertThat(held.isHeld()).isTrue();
			long released = System.nanoTime();
			held.close();
			long wokenMillis = (waiter.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			System.out.printf(
					"least-privilege ACL user: acquired, renewed, released; waiter woken after %d ms "
							+ "(notifications %s)%n",
					wokenMillis, Probes.engine(b).wakeUps().notifies() ? "on" : "off");
			assertThat(Probes.engine(b).wakeUps().notifies()).isTrue();
			assertThat(wokenMillis).isLessThan(250);
			assertThat(a.leasesLost() + b.leasesLost()).isZero();
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	@Test
	void theDocumentedTableDescribesEveryRuleOfItsCommand() {
		assertThat(AclRecipe.describedRules()).containsExactlyInAnyOrderElementsOf(List.of(LEAST_PRIVILEGE));
		assertThat(LEAST_PRIVILEGE).as("channel rules reset before the channel pattern (Redis 6.2)")
			.containsSubsequence("resetchannels", "&lockstep:*");
	}

	/**
	 * Redis 6.2 starts a new user with every channel, and refuses a channel pattern after
	 * that: what the documented {@code resetchannels} is for; 7.x starts it with none.
	 */
	@Test
	void withoutResetchannelsRedis62RefusesTheChannelPattern(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		List<String> rules = new ArrayList<>(List.of(LEAST_PRIVILEGE));
		rules.remove("resetchannels");
		List<String> command = new ArrayList<>(List.of("ACL", "SETUSER", "noreset", "on", ">secret"));
		command.addAll(rules);
		Throwable refusal = org.assertj.core.api.Assertions
			.catchThrowable(() -> redis.call(command.toArray(String[]::new)));
		System.out.printf("without resetchannels on %s: %s%n", fixture.redisVersion(),
				(refusal != null) ? refusal.getMessage() : "OK");
		// Redis 6.2 starts a user with every channel (acl-pubsub-default allchannels):
		// ask
		// the server for its default rather than read its version
		if ("allchannels".equals(config(redis, "acl-pubsub-default"))) {
			assertThat(refusal).hasMessageContaining("Adding a pattern after the * pattern");
		}
		else {
			assertThat(refusal).isNull();
		}
	}

	@Test
	void withoutChannelRightsWaitersPoll(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		String[] noChannels = java.util.Arrays.stream(LEAST_PRIVILEGE)
			.filter((rule) -> !rule.equals("&lockstep:*"))
			.toArray(String[]::new);
		user(redis, "quiet", noChannels);
		RedisClient first = client(redis, "quiet");
		RedisClient second = client(redis, "quiet");
		try (RedisLockTemplate a = TestLocks.builder(first).build();
				RedisLockTemplate b = TestLocks.builder(second).build()) {
			LockHandle held = a.acquire("polled");
			CompletableFuture<Boolean> waiter = CompletableFuture
				.supplyAsync(() -> b.withWaitTime(Duration.ofSeconds(10)).execute("polled", (lock) -> true));
			await().atMost(Duration.ofSeconds(5)).until(() -> !Probes.engine(b).wakeUps().notifies());
			held.close();
			assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	@Test
	void withoutScriptRightsTheCallFailsClearly(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		user(redis, "noscripts", "~lockstep:*", "+pttl", "+ping", "+hello");
		RedisClient client = client(redis, "noscripts");
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> locks.tryAcquire("denied"))
				.withMessageContaining("Redis failed to acquire 'lockstep:denied'")
				.withMessageContaining("NOPERM");
			assertThat(redis.call("EXISTS", "lockstep:denied")).isEqualTo(0L);
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * A refusal that cannot change is not waited for: with a 30 s wait, a user whose key
	 * pattern leaves out the fencing counter fails at its first attempt, naming Redis's
	 * {@code NOPERM}. Redis's ACL log counts the commands refused on that key: each
	 * attempt, and the undo that follows it (a failed attempt is undone, as one that
	 * timed out may still run).
	 */
	@Test
	void aRefusedCommandFailsAWaitingCallAtOnceAfterOneAttempt(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		List<String> rules = new ArrayList<>(List.of(LEAST_PRIVILEGE));
		rules.set(rules.indexOf("~lockstep:*"), "~lockstep:denied");
		rules.addAll(List.of("~lockstep:__q:*", "~lockstep:__w:*"));
		user(redis, "nofence", rules.toArray(String[]::new));
		redis.call("ACL", "LOG", "RESET");
		RedisClient client = client(redis, "nofence");
		Duration commandTimeout = Duration.ofMillis(500);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(commandTimeout)
			.waitTime(Duration.ofSeconds(30))
			.build()) {
			long start = System.nanoTime();
			Throwable failure = org.assertj.core.api.Assertions
				.catchThrowable(() -> locks.execute("denied", (lock) -> "ran"));
			long millis = (System.nanoTime() - start) / 1_000_000;
			// the undo is sent without waiting: let it reach Redis
			Eventually.holds(Duration.ofSeconds(3), () -> deniedOn(redis, "lockstep:__fence") >= 2);
			boolean more = Eventually.holds(Duration.ofMillis(500), () -> deniedOn(redis, "lockstep:__fence") > 2);
			long refused = deniedOn(redis, "lockstep:__fence");
			System.out.printf(
					"NOPERM on the fencing counter, wait time 30 s: failed in %d ms; Redis refused %d "
							+ "command(s) (the attempt and its undo; command timeout %d ms): %s%n",
					millis, refused, commandTimeout.toMillis(), failure);
			assertThat(failure).isExactlyInstanceOf(LockException.class)
				.hasMessageContaining("Could not acquire lock 'lockstep:denied'")
				.hasMessageContaining("Redis failed to acquire 'lockstep:denied'")
				.hasMessageContaining("NOPERM");
			assertThat(refused).as("commands Redis refused: one attempt and its undo").isEqualTo(2);
			assertThat(more).as("more refusals after that").isFalse();
			assertThat(millis).isLessThan(commandTimeout.toMillis() + 2_000);
			assertThat(redis.call("EXISTS", "lockstep:denied")).isEqualTo(0L);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aWrongPasswordFailsAWaitingCallAtOnce(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		user(redis, "locker", LEAST_PRIVILEGE);
		RedisClient client = RedisClient.create(RedisURI.builder()
			.withHost(redis.host())
			.withPort(redis.port())
			.withAuthentication("locker", "not-the-secret-7f3a".toCharArray())
			.build());
		Duration commandTimeout = Duration.ofMillis(500);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.commandTimeout(commandTimeout)
			.waitTime(Duration.ofSeconds(30))
			.build()) {
			long start = System.nanoTime();
			Throwable failure = org.assertj.core.api.Assertions
				.catchThrowable(() -> locks.execute("auth", (lock) -> "ran"));
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf("wrong password, wait time 30 s: failed in %d ms (command timeout %d ms): %s%n", millis,
					commandTimeout.toMillis(), failure);
			// the message names WRONGPASS (see
			// aWrongPasswordFailsClearlyWithoutShowingAnyPassword)
			assertThat(failure).isExactlyInstanceOf(LockException.class)
				.hasMessageContaining("Could not acquire lock 'lockstep:auth'");
			assertThat(millis).isLessThan(commandTimeout.toMillis() + 2_000);
		}
		finally {
			client.shutdown();
		}
	}

	/** The commands Redis refused for want of rights on the key (its ACL log). */
	private static long deniedOn(RedisNode redis, String key) {
		long count = 0;
		for (Object entry : (List<?>) redis.call("ACL", "LOG")) {
			List<?> fields = (List<?>) entry;
			Map<String, Object> byName = new LinkedHashMap<>();
			for (int i = 0; i + 1 < fields.size(); i += 2) {
				byName.put(String.valueOf(fields.get(i)), fields.get(i + 1));
			}
			if (key.equals(byName.get("object"))) {
				count += (Long) byName.get("count");
			}
		}
		return count;
	}

	/**
	 * Each documented rule removed in turn (scripts flushed, as after a restart): the
	 * lock still works, or a call fails at once with Redis's ACL refusal in its message;
	 * never a hang, never a lock key that outlives its lease, never a key without a TTL.
	 * What each rule is for is in docs/redis-acl.md.
	 */
	@Test
	void withoutAnyOneRuleLocksWorkOrFailNamingTheRefusal(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		List<String> report = new ArrayList<>();
		Map<String, String> outcomes = new LinkedHashMap<>();
		long leftAfterLease = 0;
		for (String missing : LEAST_PRIVILEGE) {
			if (missing.equals("resetchannels")) {
				continue; // not a right:
							// withoutResetchannelsRedis62RefusesTheChannelPattern
			}
			redis.call("SCRIPT", "FLUSH");
			redis.call("FLUSHALL");
			String name = "without-" + missing.replaceAll("[^a-z]", "");
			List<String> rules = new ArrayList<>(List.of(LEAST_PRIVILEGE));
			rules.remove(missing);
			user(redis, name, rules.toArray(String[]::new));
			RedisClient first = client(redis, name);
			RedisClient second = client(redis, name);
			String outcome;
			try (RedisLockTemplate a = TestLocks.builder(first)
				.leaseTime(Duration.ofMillis(900))
				.commandTimeout(Duration.ofMillis(300))
				.waitTime(Duration.ofSeconds(2))
				.build();
					RedisLockTemplate b = TestLocks.builder(second)
						.leaseTime(Duration.ofMillis(900))
						.commandTimeout(Duration.ofMillis(300))
						.build()) {
				outcome = scenario(a, b);
			}
			catch (LockException ex) {
				String message = ex.getMessage();
				// the refusal as the server words it: NOPERM, a script's "can't run this
				// command" (Redis 6.2, 7.0) or "ACL failure in script: User ... has no
				// permissions to run the '...' command" (Valkey 8)
				boolean named = message.contains("NOPERM") || message.contains("can't run this command")
						|| message.contains("has no permissions to run");
				outcome = (named ? "fails: " : "FAILS UNCLEARLY: ")
						+ message.substring(0, Math.min(150, message.length()));
			}
			finally {
				first.shutdown();
				second.shutdown();
			}
			long keys = lockKeys(redis);
			Eventually.holds(Duration.ofMillis(1_000), () -> lockKeys(redis) == 0);
			long afterLease = lockKeys(redis);
			Object names = ((List<?>) redis.call("SCAN", "0", "MATCH", "lockstep:*", "COUNT", "1000")).get(1);
			leftAfterLease += afterLease;
			outcomes.put(missing, outcome);
			report.add(String.format("  without %-14s %s; keys left %d, after a lease %d %s", missing, outcome, keys,
					afterLease, names));
		}
		System.out.printf("ACL rules removed one at a time, on %s:%n%s%n", fixture.redisVersion(),
				String.join(System.lineSeparator(), report));
		assertThat(outcomes.values()).noneMatch((outcome) -> outcome.startsWith("FAILS UNCLEARLY"));
		assertThat(leftAfterLease).as("lock keys after a lease, and keys without a TTL").isZero();
		// what docs/redis-acl.md says about each rule
		for (String scriptRight : List.of("~lockstep:*", "+evalsha", "+eval", "+set", "+incr")) {
			assertThat(outcomes.get(scriptRight)).as(scriptRight).startsWith("fails: Could not acquire");
		}
		for (String renewal : List.of("+get", "+pexpire")) {
			assertThat(outcomes.get(renewal)).as(renewal).contains("was lost while held");
		}
		// the acquire script reads the holder's lease with PTTL when the key is held: a
		// waiting call fails at once, naming the refusal ("fails:", checked above)
		assertThat(outcomes.get("+pttl")).matches("works.*|fails: Could not acquire.*");
		// the acquire script queues a waiter (TIME for the entry's expiry): a waiting
		// call
		// fails at once, naming the refusal, instead of waiting without the queue
		for (String queueing : List.of("+rpush", "+hset", "+time")) {
			assertThat(outcomes.get(queueing)).as(queueing).startsWith("fails: Could not acquire");
		}
		// without HDEL a waiter cannot leave the queue: never handed the lock (the
		// release with waiters fails), it fails naming the refusal once the lease ran out
		assertThat(outcomes.get("+hdel")).startsWith("fails: Could not acquire");
		assertThat(outcomes.get("&lockstep:*")).contains("notifications off");
		assertThat(outcomes.get("+subscribe")).contains("notifications off");
		for (String optional : List.of("+ping", "+hello", "+unsubscribe")) {
			assertThat(outcomes.get(optional)).as(optional).startsWith("works").contains("notifications on");
		}
		for (String degraded : List.of("+publish", "+del", "+lpop", "+lrem")) {
			assertThat(outcomes.get(degraded)).as(degraded).startsWith("works");
		}
		// a second reader of a read-held key looks for a queued writer (LINDEX) and for a
		// writer on several keys waiting for it (HGET of the key's waiter table)
		assertThat(outcomes.get("+lindex")).startsWith("fails: Could not acquire");
		assertThat(outcomes.get("+hget")).startsWith("fails: Could not acquire");
	}

	/**
	 * Lock keys (not Lockstep's own {@code __} keys), and any key but the fencing counter
	 * that has no TTL.
	 */
	private static long lockKeys(RedisNode redis) {
		return ((List<?>) ((List<?>) redis.call("SCAN", "0", "MATCH", "lockstep:*", "COUNT", "1000")).get(1)).stream()
			.map(String.class::cast)
			.filter((key) -> !key.equals("lockstep:__fence"))
			.filter((key) -> !key.startsWith("lockstep:__") || (Long) redis.call("PTTL", key) < 0)
			.count();
	}

	/**
	 * Acquire, wait, renew, release, then two readers of one key; "works" with the
	 * waiter's wake-up time.
	 */
	private static String scenario(RedisLockTemplate a, RedisLockTemplate b) {
		LockHandle held = a.acquire("rule");
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
			try (LockHandle lock = b.withWaitTime(Duration.ofSeconds(5)).acquire("rule")) {
				return System.nanoTime();
			}
		});
		Eventually.holds(Duration.ofSeconds(2), () -> Probes.engine(b).keysWaitedFor() == 1);
		Eventually.holds(Duration.ofMillis(1_000), () -> false); // a renewal or two
		boolean renewed = held.isHeld();
		long released = System.nanoTime();
		held.close();
		try {
			long woken = (waiter.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			// two readers of one key
			try (LockHandle reader = a.read().acquire("rule-read");
					LockHandle other = CompletableFuture.supplyAsync(() -> b.read().acquire("rule-read"))
						.get(10, TimeUnit.SECONDS)) {
				renewed = renewed && reader.isHeld() && other.isHeld();
			}
			return String.format("works: renewed %s, waiter woken after %d ms, notifications %s", renewed, woken,
					Probes.engine(b).wakeUps().notifies() ? "on" : "off");
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof LockException lock) ? lock : new IllegalStateException(ex);
		}
		catch (InterruptedException | TimeoutException ex) {
			throw new IllegalStateException("waiter did not end", ex);
		}
	}

	@Test
	void aWrongPasswordFailsClearlyWithoutShowingAnyPassword(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		user(redis, "locker", LEAST_PRIVILEGE);
		RedisClient client = RedisClient.create(RedisURI.builder()
			.withHost(redis.host())
			.withPort(redis.port())
			.withAuthentication("locker", "not-the-secret-7f3a".toCharArray())
			.build());
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			LockException failure = org.assertj.core.api.Assertions.catchThrowableOfType(LockException.class,
					() -> locks.tryAcquire("auth"));
			if (failure.getMessage().contains("Connection closed prematurely")) {
				// Lettuce (7.5) sometimes completes a refused handshake from the closing
				// channel, without Redis's reason (seen once in about ten CI runs); the
				// next
				// attempt connects again
				System.out.printf("wrong password, first attempt: '%s'%n", failure.getMessage());
				failure = org.assertj.core.api.Assertions.catchThrowableOfType(LockException.class,
						() -> locks.tryAcquire("auth"));
			}
			StringBuilder chain = new StringBuilder();
			for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
				chain.append(cause).append('\n');
			}
			System.out.printf("wrong password: '%s'; password in the exception chain: %s; keys %d%n",
					failure.getMessage(), chain.toString().contains("not-the-secret-7f3a"), redis.call("DBSIZE"));
			assertThat(failure.getMessage()).contains("WRONGPASS");
			assertThat(chain.toString()).doesNotContain("not-the-secret-7f3a").doesNotContain("secret");
			assertThat(redis.call("DBSIZE")).isEqualTo(0L);
		}
		finally {
			client.shutdown();
		}
	}

	/** One configuration parameter of the server ({@code CONFIG GET}). */
	private static String config(RedisNode redis, String parameter) {
		List<?> reply = (List<?>) redis.call("CONFIG", "GET", parameter);
		return (reply.size() > 1) ? (String) reply.get(1) : null;
	}

	private static void user(RedisNode redis, String name, String... rules) {
		String[] command = new String[rules.length + 5];
		command[0] = "ACL";
		command[1] = "SETUSER";
		command[2] = name;
		command[3] = "on";
		command[4] = ">secret";
		System.arraycopy(rules, 0, command, 5, rules.length);
		assertThat(redis.call(command)).isEqualTo("OK");
	}

	/**
	 * A client of the ACL user whose event loops are started by a first connection (which
	 * can take longer on a loaded machine than the short command timeouts here, and a
	 * lock's call that fails is not retried); that connection may be refused (a user
	 * without +hello or +ping).
	 */
	private static RedisClient client(RedisNode redis, String user) {
		RedisClient client = RedisClient.create(RedisURI.builder()
			.withHost(redis.host())
			.withPort(redis.port())
			.withAuthentication(user, "secret".toCharArray())
			.build());
		try (var connection = client.connect()) {
			connection.sync().ping();
		}
		catch (RuntimeException ex) {
			// refused: the event loops are started all the same
		}
		return client;
	}

}
