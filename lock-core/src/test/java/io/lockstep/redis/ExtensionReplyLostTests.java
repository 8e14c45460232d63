package io.lockstep.redis;

import java.time.Duration;
import java.util.Optional;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * LockHandle.extend with a shorter lease than what remains: Redis runs renew.lua (the key
 * now expires in 1 s) but its reply does not come within the command timeout, so extend()
 * throws and the handle keeps its old local deadline (30 s). Once the key expired another
 * owner takes it, while isHeld() still says true: the documented "the local deadline is
 * always earlier than the key's real expiry, so isHeld() turns false before another owner
 * can get the key" does not hold after an unanswered shortening extension.
 */
@RedisTest
class ExtensionReplyLostTests {

	@Test
	void aShorteningExtensionWhoseReplyIsLostDoesNotLeaveTheHandleHeldPastTheKey(RedisNode redis) throws Exception {
		RedisClient direct = TestLocks.client(redis);
		RedisClient behindProxy = null;
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				StatefulRedisConnection<String, String> probe = direct.connect();
				RedisLockTemplate other = TestLocks.builder(direct).build()) {
			behindProxy = RedisClient.create("redis://" + proxy.host() + ":" + proxy.port());
			try (RedisLockTemplate client = TestLocks.builder(behindProxy)
				.commandTimeout(Duration.ofMillis(300))
				.build()) {
				client.tryExecute("warm-up", (lock) -> null);
				LockHandle holder = client.withLeaseTime(Duration.ofSeconds(30)).acquire("report");
				// renew.lua in Redis's script cache: the EVALSHA itself runs, only its
				// reply
				// is lost
				assertThat(holder.extend(Duration.ofSeconds(30))).isTrue();
				proxy.holdCommandReplies();
				Throwable failure = null;
				try {
					holder.extend(Duration.ofSeconds(1));
				}
				catch (LockException ex) {
					failure = ex;
				}
				long pttlAfter = probe.sync().pttl("lockstep:report");
				proxy.pass();
				boolean expired = Eventually.holds(Duration.ofSeconds(5),
						() -> probe.sync().exists("lockstep:report") == 0);
				Optional<LockHandle> next = other.tryAcquire("report");
				System.out.printf(
						"shortening extend: %s; PTTL in Redis right after: %d ms; key expired: %s; another owner got "
								+ "it: %s; first holder isHeld(): %s%n",
						(failure != null) ? failure.getMessage() : "returned", pttlAfter, expired, next.isPresent(),
						holder.isHeld());
				try {
					assertThat(next).as("another owner holds the key now").isPresent();
					assertThat(holder.isHeld()).as("the first holder no longer claims the key another owner holds")
						.isFalse();
				}
				finally {
					next.ifPresent(LockHandle::close);
					try {
						holder.close();
					}
					catch (LockException ex) {
						// lost, as expected
					}
				}
			}
		}
		finally {
			direct.shutdown();
			if (behindProxy != null) {
				behindProxy.shutdown();
			}
		}
	}

}
