package io.lockstep.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Redis unreachable: a guarded call that may wait 30 s fails with a clear
 * {@link LockException} and its cause within the command timeout, not after the wait time
 * (only a lock held by another owner is worth waiting for), blocking and reactive alike,
 * and the protected work does not run.
 */
@RedisTest
class RedisDownTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);

	private static final Duration WAIT_TIME = Duration.ofSeconds(30);

	/**
	 * Lockstep's own bound on the reply, or Lettuce's command timeout of the same length
	 * when its timer fires first (a loaded machine).
	 */
	private static final String TIMED_OUT = "(?s).*(Redis did not answer within 500ms|Command timed out after 500).*";

	/**
	 * Above the command timeout a loaded machine adds, far below the wait time: tells
	 * "failed at the first attempt" from "waited".
	 */
	private static final long MARGIN_MILLIS = 2_000;

	@Test
	void aStoppedRedisFailsAWaitingCallWithinTheCommandTimeoutNotTheWaitTime(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = template(client)) {
			locks.execute("warm-up", (lock) -> null);
			redis.pause();
			try {
				AtomicBoolean ran = new AtomicBoolean();
				LockException failure = failsFast("Redis SIGSTOPped, blocking execute",
						() -> locks.execute("down", (lock) -> ran.getAndSet(true)));
				assertThat(failure).hasMessageContaining("Could not acquire lock 'lockstep:down'")
					.hasMessageMatching(TIMED_OUT)
					.hasCauseInstanceOf(LockException.class);
				assertThat(ran).isFalse();
			}
			finally {
				redis.resume();
			}
			String after = locks.execute("down", (lock) -> "acquired once Redis answers");
			assertThat(after).isEqualTo("acquired once Redis answers");
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aStoppedRedisFailsAWaitingMonoWithinTheCommandTimeoutNotTheWaitTime(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = template(client)) {
			ReactiveLockTemplate reactive = ReactiveLocks.of(locks);
			locks.execute("warm-up", (lock) -> null);
			redis.pause();
			try {
				AtomicBoolean ran = new AtomicBoolean();
				LockException failure = failsFast("Redis SIGSTOPped, reactive execute",
						() -> reactive.execute("down", (lock) -> Mono.fromCallable(() -> ran.getAndSet(true)))
							.block(WAIT_TIME.plusSeconds(10)));
				assertThat(failure).hasMessageContaining("Could not acquire lock 'lockstep:down'")
					.hasMessageMatching(TIMED_OUT);
				assertThat(ran).isFalse();
			}
			finally {
				redis.resume();
			}
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aPortNothingListensOnFailsAWaitingCallAtOnceBlockingAndReactive() {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", unusedPort()));
		try (RedisLockTemplate locks = template(client)) {
			AtomicBoolean ran = new AtomicBoolean();
			LockException blocking = failsFast("nothing listens on the port, blocking execute",
					() -> locks.execute("nowhere", (lock) -> ran.getAndSet(true)));
			LockException reactive = failsFast("nothing listens on the port, reactive execute",
					() -> ReactiveLocks.of(locks)
						.execute("nowhere", (lock) -> Mono.fromCallable(() -> ran.getAndSet(true)))
						.block(WAIT_TIME.plusSeconds(10)));
			for (LockException failure : new LockException[] { blocking, reactive }) {
				assertThat(failure).hasMessageContaining("Could not acquire lock 'lockstep:nowhere'")
					.hasMessageContaining("Cannot connect to Redis");
			}
			assertThat(ran).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void aKilledRedisFailsAWaitingCallWithTheCauseWithinTheCommandTimeout(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = template(client)) {
			locks.execute("warm-up", (lock) -> null);
			redis.kill();
			AtomicBoolean ran = new AtomicBoolean();
			LockException failure = failsFast("Redis SIGKILLed, blocking execute",
					() -> locks.execute("gone", (lock) -> ran.getAndSet(true)));
			assertThat(failure).hasMessageContaining("lockstep:gone").hasCauseInstanceOf(LockException.class);
			assertThat(ran).isFalse();
		}
		finally {
			client.shutdown();
		}
	}

	private static RedisLockTemplate template(RedisClient client) {
		return TestLocks.builder(client).commandTimeout(COMMAND_TIMEOUT).waitTime(WAIT_TIME).build();
	}

	/**
	 * Runs a call that must fail with a {@link LockException} (not a timeout of the wait)
	 * within the command timeout plus the margin; prints the figure.
	 */
	private static LockException failsFast(String what, Supplier<?> call) {
		long start = System.nanoTime();
		Throwable thrown = catchThrowable(call::get);
		long millis = (System.nanoTime() - start) / 1_000_000;
		System.out.printf("%s: failed in %d ms, command timeout %d ms, wait time %d s: %s%n", what, millis,
				COMMAND_TIMEOUT.toMillis(), WAIT_TIME.toSeconds(), thrown);
		assertThat(thrown).as(what).isInstanceOf(LockException.class).isNotInstanceOf(LockAcquisitionException.class);
		assertThat(millis).as(what + ": milliseconds to fail").isLessThan(COMMAND_TIMEOUT.toMillis() + MARGIN_MILLIS);
		return (LockException) thrown;
	}

	private static int unusedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
