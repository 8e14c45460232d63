package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many held locks are renewed in few round trips.
 */
@RedisTest
class RenewalBatchingTests {

	@Test
	void aThousandHeldLocksAreRenewedInAtMostTenRoundTripsPerTick(RedisNode redis) {
		RedisClient client = TestLocks.client(redis);
		Duration lease = Duration.ofMillis(1_500);
		try (RedisLockTemplate locks = TestLocks.builder(client)
			.leaseTime(lease)
			.commandTimeout(Duration.ofMillis(400))
			.build()) {
			List<LockHandle> held = new ArrayList<>();
			for (int i = 0; i < 1_000; i++) {
				held.add(locks.acquire("bulk:" + i));
			}
			long scriptsBefore = TestLocks.commandCalls(redis, "evalsha") + TestLocks.commandCalls(redis, "eval");
			long window = lease.toMillis() * 2;
			Eventually.holds(Duration.ofMillis(window), () -> false); // measuring
																		// window, not
																		// synchronisation
			long roundTrips = TestLocks.commandCalls(redis, "evalsha") + TestLocks.commandCalls(redis, "eval")
					- scriptsBefore;
			int perTick = Probes.engine(locks).mostRenewalCallsInAPass();
			// every lock is renewed about every lease/3, so about 6 times in the window
			long renewals = 1_000L * window / (lease.toMillis() / 3);
			System.out.printf(
					"1000 held locks over %d ms: %d renewal round trips for ~%d renewals (%.0f keys per "
							+ "round trip), at most %d round trips in one tick%n",
					window, roundTrips, renewals, (double) renewals / roundTrips, perTick);
			assertThat(held).allMatch(LockHandle::isHeld);
			assertThat(perTick).isBetween(1, 10);
			assertThat(roundTrips).isLessThanOrEqualTo(renewals / 50);
			held.forEach(LockHandle::close);
			assertThat(locks.leasesLost()).isZero();
		}
		finally {
			client.shutdown();
		}
	}

}
