package io.lockstep.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.LockKeyException;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Keys built from user input: separators, braces, control characters and any Unicode
 * never make two different keys share a Redis key, and input that Redis could not tell
 * apart is refused.
 */
@RedisTest
class KeyInjectionTests {

	/**
	 * Separators, braces, whitespace and control characters, non-ASCII, a surrogate pair.
	 */
	private static final String[] PIECES = { "a", "b", "7", ":", "::", "{", "}", "{}", "}{", "{x}", "\n", "\r\n", "\t",
			" ", "ü", "日本", "é", "e\u0301", "😀", "%", "*", "?", "[", "\\", "\"", "'", "__fence", "\u0000" };

	@Test
	void tenThousandRandomNameAndKeyPairsNeverShareARedisKey(RedisNode redis) {
		Random random = new Random(12);
		RedisClient client = TestLocks.client(redis);
		redis.call("FLUSHALL");
		Map<String, String> pairByRedisKey = new HashMap<>();
		List<LockHandle> held = new ArrayList<>();
		int pairs = 0;
		int aliases = 0;
		int collisions = 0;
		try (RedisLockTemplate locks = TestLocks.builder(client).leaseTime(Duration.ofSeconds(60)).build()) {
			while (pairs < 10_000) {
				String name = (random.nextBoolean()) ? "" : "n" + text(random);
				String key = text(random);
				if (key.isBlank()) {
					continue;
				}
				pairs++;
				String expected = "lockstep:" + (name.isEmpty() ? "" : name + ":") + key;
				String pair = "(" + name + ", " + key + ")";
				String earlier = pairByRedisKey.putIfAbsent(expected, pair);
				if (earlier != null) {
					// documented: the Redis key is <prefix>[<name>:]<key>, and a key is a
					// lock
					aliases += earlier.equals(pair) ? 0 : 1;
					continue;
				}
				LockTemplate template = name.isEmpty() ? locks : locks.named(name);
				Optional<LockHandle> lock = template.tryAcquire(key);
				if (lock.isEmpty() || !lock.get().key().equals(expected)) {
					collisions++;
					lock.ifPresent(LockHandle::close);
					continue;
				}
				held.add(lock.get());
			}
			long stored = (Long) redis.call("DBSIZE") - 1;
			long matching = held.stream().filter((lock) -> (Long) redis.call("EXISTS", lock.key()) == 1).count();
			held.forEach(LockHandle::close);
			long left = (Long) redis.call("DBSIZE") - 1;
			System.out.printf(
					"keys: %,d random (name, key) pairs with : { } \\n \\0 and Unicode -> %,d distinct Redis keys, "
							+ "%d collisions; %,d stored (%,d byte-exact); %d pairs alias through the documented "
							+ "'<name>:<key>' join; %d keys left after release (besides the fencing counter)%n",
					pairs, pairByRedisKey.size(), collisions, stored, matching, aliases, left);
			assertThat(collisions).isZero();
			assertThat(stored).isEqualTo(pairByRedisKey.size());
			assertThat(matching).isEqualTo(pairByRedisKey.size());
			assertThat(left).isZero();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aNameAndAKeyAreJoinedByAColonAsDocumented(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).build();
				RedisLockTemplate other = TestLocks.builder(client).build();
				LockHandle lock = locks.named("a").acquire("b:c")) {
			// one Redis key, so one lock: names are namespaces, not a separate dimension
			assertThat(lock.key()).isEqualTo("lockstep:a:b:c");
			assertThat(other.named("a:b").tryAcquire("c")).isEmpty();
			assertThat(other.tryAcquire("a:b:c")).isEmpty();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void keysThatUtf8CannotEncodeAreRefusedRatherThanFoldedIntoAnotherKey(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		redis.call("FLUSHALL");
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			long commandsBefore = TestLocks.commandCalls(redis);
			// Java's UTF-8 encoder writes '?' for a lone surrogate: "k\uD800" would be
			// the
			// Redis key of "k?"
			List<String> malformed = List.of("k\uD800", "k\uDC00", "\uDE00x", "a\uD83D", "\uD83D\uD83D");
			assertThat("k\uD800".getBytes(StandardCharsets.UTF_8)).isEqualTo("k?".getBytes(StandardCharsets.UTF_8));
			int refused = 0;
			for (String key : malformed) {
				assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> locks.tryAcquire(key))
					.withMessageContaining("unpaired surrogate");
				assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> locks.named(key).tryAcquire("x"))
					.withMessageContaining("unpaired surrogate");
				refused++;
			}
			long commands = TestLocks.commandCalls(redis) - commandsBefore;
			System.out.printf("keys: %d keys and names with an unpaired surrogate refused, %d Redis commands, %d keys "
					+ "written%n", refused, commands, (Long) redis.call("DBSIZE"));
			assertThat(commands).isZero();
			assertThat(redis.call("DBSIZE")).isEqualTo(0L);
			try (LockHandle lock = locks.acquire("k😀")) {
				assertThat(redis.call("EXISTS", "lockstep:k😀")).isEqualTo(1L);
			}
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void theKeyLimitCountsUtf8BytesOfEveryWidth(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		redis.call("FLUSHALL");
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			int room = RedisLockTemplate.MAX_KEY_BYTES - "lockstep:".length();
			int accepted = 0;
			// characters of 1, 2, 3 and 4 bytes (a surrogate pair) in UTF-8
			for (String piece : List.of("k", "\u00e9", "\u20ac", "\uD83D\uDE00")) {
				int width = piece.getBytes(StandardCharsets.UTF_8).length;
				String fits = "k".repeat(room % width) + piece.repeat(room / width);
				assertThat(("lockstep:" + fits).getBytes(StandardCharsets.UTF_8))
					.hasSize(RedisLockTemplate.MAX_KEY_BYTES);
				try (LockHandle lock = locks.acquire(fits)) {
					assertThat(redis.call("EXISTS", "lockstep:" + fits)).isEqualTo(1L);
					accepted++;
				}
				String over = fits + "k";
				assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> locks.tryAcquire(over))
					.withMessageContaining("is " + (RedisLockTemplate.MAX_KEY_BYTES + 1) + " bytes as a Redis key");
			}
			System.out.printf("keys: %d keys of exactly %d UTF-8 bytes accepted, one byte more refused%n", accepted,
					RedisLockTemplate.MAX_KEY_BYTES);
		}
		finally {
			client.shutdown();
		}
	}

	private static String text(Random random) {
		StringBuilder text = new StringBuilder();
		for (int i = 0, n = 1 + random.nextInt(5); i < n; i++) {
			text.append(PIECES[random.nextInt(PIECES.length)]);
		}
		return text.toString().startsWith("__") ? "x" + text : text.toString();
	}

}
