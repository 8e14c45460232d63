package io.lockstep.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Exception messages give durations as people write them ({@code 150ms}, {@code 2s}), not
 * ISO-8601 ({@code PT0.150312S}).
 */
@RedisTest
class DurationMessagesTests {

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate locks;

	DurationMessagesTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.client = TestLocks.client(this.redis);
		this.locks = TestLocks.builder(this.client).build();
	}

	@AfterEach
	void disconnect() {
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void anAcquisitionTimeoutSaysHowLongItWaitedInMilliseconds() {
		try (RedisLockTemplate other = TestLocks.builder(this.client).build();
				LockHandle held = other.acquire("busy")) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.locks.withWaitTime(Duration.ofMillis(150)).acquire("busy"))
				.withMessageMatching("Lock 'lockstep:busy' not acquired within (\\d+ms|\\d+(\\.\\d{1,3})?s): held by "
						+ "another owner")
				.satisfies((failure) -> {
					System.out.printf("acquisition timeout: %s%n", failure.getMessage());
					assertThat(failure.getWaited()).isGreaterThanOrEqualTo(Duration.ofMillis(150));
				});
		}
	}

	@Test
	void aLostFixedLeaseNamesItsLengthAsConfigured() {
		LockHandle lock = this.locks.withLeaseTime(Duration.ofMillis(300)).acquire("fixed");
		await().atMost(Duration.ofSeconds(3)).until(() -> !lock.isHeld());
		// the message is the watchdog's: wait until it has marked the lease lost (a close
		// between the local deadline and that mark frees the key, still ours, as a
		// release)
		await().atMost(Duration.ofSeconds(3)).until(() -> Probes.engine(this.locks).registered() == 0);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lock::close)
			.withMessage("Lock 'lockstep:fixed' was lost while held: its fixed lease of 300ms ran out while held");
	}

}
