package io.lockstep.internal.redis;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock's commands against a real Redis: a bounded command leaves nothing behind once
 * it completes, however long its timeout.
 */
@RedisTest
class LockCommandsTests {

	private static final int COMMANDS = 2_000;

	@Test
	void aCompletedBoundedCommandKeepsNoTimeoutTaskNorItsReply(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		// a timeout far longer than the test: a task left behind keeps its command
		try (LockCommands commands = new LockCommands(client, Duration.ofMinutes(1))) {
			List<WeakReference<Object>> replies = new ArrayList<>();
			List<CompletableFuture<List<Long>>> pending = new ArrayList<>();
			for (int i = 0; i < COMMANDS; i++) {
				pending.add(commands.evalBounded(LockScripts.RENEW, List.of("lockstep:gone-" + i),
						List.of("owner", "1000"), () -> "renew"));
			}
			for (CompletableFuture<List<Long>> reply : pending) {
				replies.add(new WeakReference<>(reply.get(30, TimeUnit.SECONDS)));
			}
			pending.clear();
			boolean released = Eventually.holds(Duration.ofSeconds(10), () -> {
				System.gc();
				return replies.stream().allMatch((reply) -> reply.get() == null);
			});
			long kept = replies.stream().filter((reply) -> reply.get() != null).count();
			// cancelled tasks leave the queue at the timeout thread's next purge (every
			// second)
			boolean purged = Eventually.holds(Duration.ofSeconds(5), () -> CommandTimeouts.pending() == 0);
			System.out.printf("%,d bounded commands (timeout 1 min) completed: %,d replies still reachable after GC, "
					+ "%,d timeout tasks pending after the purge%n", COMMANDS, kept, CommandTimeouts.pending());
			assertThat(released).as("%d of %d replies still reachable", kept, COMMANDS).isTrue();
			assertThat(purged).as("timeout tasks pending: %d", CommandTimeouts.pending()).isTrue();
		}
		finally {
			client.shutdown();
		}
	}

}
