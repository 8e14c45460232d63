package io.lockstep.redis;

import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.LockEngine;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Owner tokens: 128 bits from a {@link SecureRandom}, fresh for every acquisition, never
 * repeated. The token is the only thing that lets a client renew or release a lock.
 */
@RedisTest
class OwnerTokenTests {

	private static final int TOKENS = 1_000_000;

	@Test
	void theTokenMethodReadsOnlyFromASecureRandom() {
		Class<?> tokens = ownerTokens();
		JavaClass engine = new ClassFileImporter().importClasses(tokens).get(tokens);
		JavaMethod nextToken = engine.getMethod("nextToken");
		Set<String> calls = new HashSet<>();
		nextToken.getCallsFromSelf().forEach((call) -> calls.add(target(call)));
		Set<String> fields = new HashSet<>();
		nextToken.getFieldAccesses().forEach((access) -> fields.add(access.getTarget().getName()));
		String randomType = engine.getField("random").getRawType().getName();
		System.out.printf("owner token: OwnerTokens.nextToken() calls %s, reads %s of type %s%n", calls, fields,
				randomType);
		// the generator fills a batch of tokens' bytes; a token is copied out of it, and
		// its bytes cleared there
		assertThat(calls).containsExactlyInAnyOrder("java.security.SecureRandom.nextBytes",
				"java.lang.System.arraycopy", "java.util.Arrays.fill");
		assertThat(fields).containsExactlyInAnyOrder("random", "batch", "taken");
		assertThat(engine.getField("batch").getAccessesToSelf())
			.allMatch((access) -> access.getOrigin().getName().equals("nextToken")
					|| access.getOrigin().getName().equals("<clinit>"));
		assertThat(randomType).isEqualTo(SecureRandom.class.getName());
		// and nothing else there builds a token from a weaker source
		assertThat(engine.getMethodCallsFromSelf()).noneMatch(
				(call) -> target(call).startsWith("java.util.UUID.") || target(call).startsWith("java.util.Random."));
	}

	@Test
	void aMillionTokensAre128BitsWithoutRepeatsOrBias() throws Exception {
		Method nextToken = ownerTokens().getDeclaredMethod("nextToken");
		nextToken.setAccessible(true);
		long[] high = new long[TOKENS];
		long[] low = new long[TOKENS];
		long[] ones = new long[128];
		long[] byteCounts = new long[256];
		int shortest = Integer.MAX_VALUE;
		for (int i = 0; i < TOKENS; i++) {
			byte[] token = (byte[]) nextToken.invoke(null);
			shortest = Math.min(shortest, token.length);
			for (int b = 0; b < token.length; b++) {
				int value = token[b] & 0xff;
				byteCounts[value]++;
				for (int bit = 0; bit < 8; bit++) {
					ones[b * 8 + bit] += (value >>> bit) & 1;
				}
				if (b < 8) {
					high[i] = (high[i] << 8) | value;
				}
				else if (b < 16) {
					low[i] = (low[i] << 8) | value;
				}
			}
		}
		int duplicates = duplicates(high, low);
		double expected = TOKENS / 2.0;
		double sigma = Math.sqrt(TOKENS * 0.25);
		double worstBitSigmas = Arrays.stream(ones)
			.mapToDouble((count) -> Math.abs(count - expected) / sigma)
			.max()
			.orElse(Double.MAX_VALUE);
		long totalBytes = Arrays.stream(byteCounts).sum();
		double perValue = totalBytes / 256.0;
		double chiSquare = Arrays.stream(byteCounts)
			.mapToDouble((count) -> (count - perValue) * (count - perValue) / perValue)
			.sum();
		double entropyPerByte = Arrays.stream(byteCounts).mapToDouble((count) -> {
			double p = (double) count / totalBytes;
			return (p > 0) ? -p * Math.log(p) / Math.log(2) : 0;
		}).sum();
		System.out.printf(
				"owner token: %,d tokens of %d bits -> %d duplicates; worst bit bias %.2f sigma over 128 bits; "
						+ "byte chi-square %.1f (255 dof); %.5f bits of entropy per byte%n",
				TOKENS, shortest * 8, duplicates, worstBitSigmas, chiSquare, entropyPerByte);
		assertThat(shortest).as("token bytes").isGreaterThanOrEqualTo(16);
		assertThat(duplicates).isZero();
		// each of the 128 bits is set in half of the tokens, within 5 standard deviations
		assertThat(worstBitSigmas).isLessThan(5.0);
		// p < 1e-8 for a uniform source
		assertThat(chiSquare).isLessThan(400);
		assertThat(entropyPerByte).isGreaterThan(7.999);
	}

	@Test
	void everyAcquisitionStoresAFreshTokenInRedis(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			Set<String> tokens = new HashSet<>();
			int acquisitions = 10_000;
			for (int i = 0; i < acquisitions; i++) {
				// the same few keys again and again: a key never gets its old token back
				try (LockHandle lock = locks.acquire("token:" + (i % 4))) {
					String value = (String) redis.call("GET", lock.key());
					String token = value.substring(0, value.indexOf(':'));
					tokens.add(token);
					assertThat(HexFormat.of().parseHex(token)).hasSize(16);
				}
			}
			System.out.printf("owner token: %,d acquisitions of 4 keys -> %,d distinct tokens stored in Redis%n",
					acquisitions, tokens.size());
			assertThat(tokens).hasSize(acquisitions);
		}
		finally {
			client.shutdown();
		}
	}

	/** The engine's one source of owner tokens. */
	private static Class<?> ownerTokens() {
		try {
			return Class.forName(LockEngine.class.getPackageName() + ".OwnerTokens");
		}
		catch (ClassNotFoundException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String target(JavaAccess<?> access) {
		return access.getTargetOwner().getName() + "." + access.getName();
	}

	/** Token pairs seen twice, after sorting by the high 64 bits. */
	private static int duplicates(long[] high, long[] low) {
		Integer[] order = new Integer[high.length];
		for (int i = 0; i < order.length; i++) {
			order[i] = i;
		}
		Arrays.sort(order,
				(a, b) -> (high[a] != high[b]) ? Long.compare(high[a], high[b]) : Long.compare(low[a], low[b]));
		int duplicates = 0;
		for (int i = 1; i < order.length; i++) {
			if (high[order[i]] == high[order[i - 1]] && low[order[i]] == low[order[i - 1]]) {
				duplicates++;
			}
		}
		return duplicates;
	}

}
