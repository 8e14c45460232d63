package io.lockstep.redis;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;

import io.lettuce.core.RedisClient;
import io.lockstep.LockKeyException;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Bad input gets a clear exception naming what is wrong, and changes nothing in Redis.
 */
@RedisTest
class BadInputTests {

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate locks;

	private long commandsBefore;

	BadInputTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.locks = TestLocks.builder(this.client).build();
		this.commandsBefore = TestLocks.commandCalls(this.redis);
	}

	@AfterEach
	void nothingReachedRedis() {
		assertThat(TestLocks.commandCalls(this.redis)).as("commands sent").isEqualTo(this.commandsBefore);
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void rejectsNullEmptyReservedAndOverlongKeys() {
		assertKey(() -> this.locks.acquire(null), "must not be null");
		assertKey(() -> this.locks.execute("", (lock) -> null), "must not be empty");
		assertKey(() -> this.locks.tryAcquire("  "), "must not be empty");
		assertKey(() -> this.locks.acquire("__fence"), "reserved");
		assertKey(() -> this.locks.acquireAll(Collections.emptyList()), "must not be null or empty");
		assertKey(() -> this.locks.acquireAll(java.util.Arrays.asList("a", null)), "must not be null");
		assertKey(() -> this.locks.isLocked(null), "must not be null");
		String overlong = "k".repeat(RedisLockTemplate.MAX_KEY_BYTES);
		assertKey(() -> this.locks.acquire(overlong), "over the limit of 1024");
		this.locks.named("n"); // a name alone is fine
	}

	@Test
	void rejectsBadDurationsNamingTheSetting() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.withLeaseTime(Duration.ZERO))
			.withMessageContaining("'leaseTime'")
			.withMessageContaining("but was 0s");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.withLeaseTime(Duration.ofSeconds(-1)))
			.withMessageContaining("'leaseTime'");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.withWaitTime(Duration.ofMillis(-1)))
			.withMessageContaining("'waitTime'");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.withWaitTime(Duration.ofHours(2)))
			.withMessageContaining("'waitTime' must be between 0s and 1h but was 2h");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.withWaitTime(null))
			.withMessageContaining("'waitTime' must not be null");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TestLocks.builder(this.client).leaseTime(Duration.ofMillis(300)).build())
			.withMessageContaining("'commandTimeout'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TestLocks.builder(this.client).lockOverride("orders", null, Duration.ofMillis(1)))
			.withMessageContaining("locks.orders.lease-time");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.named("__x"))
			.withMessageContaining("reserved");
		assertThatIllegalArgumentException().isThrownBy(() -> this.locks.execute("k", null))
			.withMessageContaining("'callback'");
	}

	private static void assertKey(Executable call, String message) {
		assertThatExceptionOfType(LockKeyException.class).isThrownBy(call::execute).withMessageContaining(message);
	}

	// a guard: the engine these tests were written against already threw
	// LockKeyException here
	@Test
	void aNullAmongSeveralKeysIsALockKeyException(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).build()) {
			Throwable thrown = catchThrowable(() -> locks.acquireAll(Arrays.asList("a", null)).close());
			System.out.printf("acquireAll([a, null]) threw %s%n", thrown);
			assertThat(thrown).isInstanceOf(LockKeyException.class);
			// read from Redis itself: the client's first command would connect, which may
			// take longer than its command timeout when this test runs first on a loaded
			// machine ('Redis did not answer within 2s to read the lease')
			assertThat(redis.call("EXISTS", "lockstep:a")).as("lock key of a").isEqualTo(0L);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aLockOverrideWithALeaseTooShortForTheCommandTimeoutIsRejected(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try {
			RedisLockTemplateBuilder builder = TestLocks.builder(client)
				.commandTimeout(Duration.ofSeconds(2))
				.lockOverride("fast", null, Duration.ofMillis(300));
			Throwable thrown = catchThrowable(() -> builder.build().close());
			System.out.printf("lease-time 300 ms for 'fast' with commandTimeout 2 s: build() threw %s%n", thrown);
			assertThat(thrown).as("build()").isInstanceOf(IllegalArgumentException.class);
			assertThat(thrown.getMessage()).contains("fast").contains("commandTimeout");
		}
		finally {
			client.shutdown();
		}
	}

}
