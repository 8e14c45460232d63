package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lockstep under a least-privilege Redis ACL user: the commands and key and channel
 * patterns the README lists are enough (acquire, wait by notification, renew, release);
 * without channel rights it falls back to polling; without script rights it fails
 * clearly.
 */
@RedisTest
class AclTests {

	/** The rules the README documents, for key prefix {@code lockstep:}. */
	static final String[] LEAST_PRIVILEGE = { "~lockstep:*", "&lockstep:*", "+evalsha", "+eval", "+pttl", "+ping",
			"+subscribe", "+unsubscribe", "+get", "+set", "+pexpire", "+del", "+time", "+publish", "+hello", "+incr",
			"+rpush", "+lpop", "+lrem", "+hset", "+hget", "+hdel" };

	@Test
	void theDocumentedRulesAreEnough(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		user(redis, "locker", LEAST_PRIVILEGE);
		RedisClient first = client(redis, "locker");
		RedisClient second = client(redis, "locker");
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
			assertThat(TestLocks.eventually(Duration.ofSeconds(5), () -> b.engine().keysWaitedFor() == 1)).isTrue();
			TestLocks.eventually(Duration.ofMillis(700), () -> false); // renewed at least
																		// twice
			assertThat(held.isHeld()).isTrue();
			long released = System.nanoTime();
			held.close();
			long wokenMillis = (waiter.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			System.out.printf("least-privilege ACL user: acquired, renewed, released; waiter woken after %d ms "
					+ "(notifications %s)%n", wokenMillis, b.engine().backend().notifies() ? "on" : "off");
			assertThat(b.engine().backend().notifies()).isTrue();
			assertThat(wokenMillis).isLessThan(250);
			assertThat(a.leasesLost() + b.leasesLost()).isZero();
		}
		finally {
			first.shutdown();
			second.shutdown();
		}
	}

	@Test
	void withoutChannelRightsWaitersPoll(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		String[] noChannels = java.util.Arrays.stream(LEAST_PRIVILEGE)
			.map((rule) -> rule.equals("&lockstep:*") ? "resetchannels" : rule)
			.toArray(String[]::new);
		user(redis, "quiet", noChannels);
		RedisClient first = client(redis, "quiet");
		RedisClient second = client(redis, "quiet");
		try (RedisLockTemplate a = TestLocks.builder(first).build();
				RedisLockTemplate b = TestLocks.builder(second).build()) {
			LockHandle held = a.acquire("polled");
			CompletableFuture<Boolean> waiter = CompletableFuture
				.supplyAsync(() -> b.withWaitTime(Duration.ofSeconds(10)).execute("polled", (lock) -> true));
			assertThat(TestLocks.eventually(Duration.ofSeconds(5), () -> !b.engine().backend().notifies())).isTrue();
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
				.withMessageContaining("NOPERM");
			assertThat(redis.call("EXISTS", "lockstep:denied")).isEqualTo(0L);
		}
		finally {
			client.shutdown();
		}
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

	private static RedisClient client(RedisNode redis, String user) {
		return RedisClient.create(RedisURI.builder()
			.withHost(redis.host())
			.withPort(redis.port())
			.withAuthentication(user, "secret".toCharArray())
			.build());
	}

}
