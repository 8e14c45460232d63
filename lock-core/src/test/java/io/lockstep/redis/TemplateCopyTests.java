package io.lockstep.redis;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A configured copy of a template ({@code withLeaseTime(...)} and the like) shares the
 * template's connection and threads: closing it leaves the template working.
 */
@RedisTest
class TemplateCopyTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

	@Test
	void closingAConfiguredCopyLeavesTheTemplateWorking(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.template(client, LEASE, COMMAND_TIMEOUT)) {
			LockHandle held = locks.acquire("copy:held");
			try (RedisLockTemplate copy = locks.withWaitTime(Duration.ofSeconds(1))) {
				copy.tryAcquire("copy:x").ifPresent(LockHandle::close);
			}
			Presence presence = Presence.watch(redis, "lockstep:copy:held", LEASE.multipliedBy(3));
			Throwable failure = catchThrowable(() -> locks.acquire("copy:y").close());
			System.out.printf("copy closed: key of a held lock present at %s over 3 leases; acquire after: %s%n",
					presence, (failure != null) ? failure : "ok");
			assertThat(presence.present())
				.as("checks finding the key of a lock held through the template after a copy was closed (%s)", presence)
				.isEqualTo(presence.checks());
			assertThat(failure).as("acquire through the template after a copy was closed").isNull();
			assertThat(held.isHeld()).isTrue();
			held.close();
		}
		finally {
			client.shutdown();
		}
	}

}
