package io.lockstep.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lettuce.core.RedisClient;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Redis unreachable: a clear LockException with the cause, bounded by the command
 * timeout, and the protected work does not run.
 */
@RedisTest
class RedisDownTests {

	@Test
	void aPausedRedisFailsTheCallWithinTheWaitPlusTheCommandTimeout(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		Duration commandTimeout = Duration.ofMillis(300);
		try (RedisLockTemplate locks = TestLocks.builder(client).commandTimeout(commandTimeout).build()) {
			locks.execute("warm-up", (lock) -> null);
			redis.pause();
			AtomicBoolean ran = new AtomicBoolean();
			long start = System.nanoTime();
			assertThatExceptionOfType(LockException.class)
				.isThrownBy(
						() -> locks.withWaitTime(Duration.ofMillis(200)).execute("down", (lock) -> ran.getAndSet(true)))
				.isNotInstanceOf(LockAcquisitionException.class)
				.withMessageContaining("Redis did not answer within 300ms")
				.withMessageContaining("lockstep:down")
				.withCauseInstanceOf(java.util.concurrent.TimeoutException.class);
			long millis = (System.nanoTime() - start) / 1_000_000;
			redis.resume();
			System.out.printf("redis paused: call failed after %d ms (wait 200 ms + command timeout 300 ms)%n", millis);
			assertThat(ran).isFalse();
			assertThat(millis).isLessThan(200 + 300 + 300);
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aKilledRedisFailsWithTheCause(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).commandTimeout(Duration.ofMillis(500)).build()) {
			redis.kill();
			AtomicBoolean ran = new AtomicBoolean();
			assertThatExceptionOfType(LockException.class)
				.isThrownBy(() -> locks.execute("gone", (lock) -> ran.getAndSet(true)))
				.withMessageContaining("lockstep:gone");
			assertThat(ran).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

}
