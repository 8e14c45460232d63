package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLock;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A release that cannot reach Redis (after the annotated method returned) does not fail
 * the call that returned.
 */
@RedisTest
class UnreachableReleaseTests extends AbstractRedisStarterTests {

	private static final String PREFIX = "unreachable-release:";

	UnreachableReleaseTests() {
		super(PREFIX);
	}

	@Test
	void releaseThatCannotReachRedisDoesNotFailTheCallThatReturned() {
		this.contextRunner.withPropertyValues("lockstep.lease-time=3s")
			.withBean(Pausing.class, () -> new Pausing(this.redis))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Pausing pausing = context.getBean(Pausing.class);
				AtomicReference<String> result = new AtomicReference<>();
				long start = System.nanoTime();
				Throwable failure;
				try {
					failure = catchThrowable(() -> result.set(pausing.pauseRedisAndReturn("paused")));
				}
				finally {
					this.redis.resume();
				}
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				System.out.printf("Redis paused inside the method: returned %s after %d ms, failure %s%n", result.get(),
						took.toMillis(), failure);
				assertThat(failure).as("failure of a call whose method returned").isNull();
				assertThat(result).hasValue("value");
				LockTemplate locks = context.getBean(LockTemplate.class);
				long fencingToken = locks.withWaitTime(Duration.ofSeconds(10))
					.execute("paused", LockHandle::fencingToken);
				assertThat(fencingToken).isPositive();
			});
	}

	static class Pausing {

		private final RedisNode redis;

		Pausing(RedisNode redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "#key")
		String pauseRedisAndReturn(String key) {
			this.redis.pause();
			return "value";
		}

	}

}
