package io.lockstep.internal.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The release channel against a real Redis (plain SUBSCRIBE, any version): a subscription
 * whose SUBSCRIBE failed (here: its reply delayed past the client's command timeout, as
 * Spring Boot's Lettuce client times out its commands) is tried again until it is
 * confirmed, so the client hears its own hand-off channel again once Redis answers in
 * time; before, it recorded the failure and never asked again.
 */
@RedisTest
class PubSubChannelTests {

	@Test
	void aSubscribeThatFailedIsTriedAgainUntilItIsConfirmed(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		try (ChaosProxy proxy = ChaosProxy.to(redis)) {
			RedisClient client = RedisClient.create(RedisURI.create(proxy.host(), proxy.port()));
			client.setOptions(
					ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(200))).build());
			try (PubSubChannel channel = new PubSubChannel(client, Duration.ofMillis(200))) {
				channel.prepare();
				assertThat(channel.isConnected()).as("connected").isTrue();
				proxy.delay(1000);
				CompletableFuture<?> own = channel.subscribeOwn("lockstep:__c:retried");
				CompletableFuture<?> key = channel.subscribe("lockstep:retried");
				assertThat(own).as("own channel's SUBSCRIBE while Redis answers late")
					.failsWithin(Duration.ofSeconds(5));
				assertThat(key).as("key channel's SUBSCRIBE while Redis answers late")
					.failsWithin(Duration.ofSeconds(5));
				assertThat(channel.hearsOwn("lockstep:__c:retried")).isFalse();
				proxy.pass();
				boolean heard = Eventually.holds(Duration.ofSeconds(10),
						() -> channel.hearsOwn("lockstep:__c:retried")
								&& subscribers(redis, "lockstep:__c:retried") == 1
								&& subscribers(redis, "lockstep:retried") == 1);
				System.out.printf(
						"SUBSCRIBE timed out while Redis answered 2 s late; once it answered in time: hears its own "
								+ "channel %s, subscribers of the own channel %d, of the key's channel %d%n",
						channel.hearsOwn("lockstep:__c:retried"), subscribers(redis, "lockstep:__c:retried"),
						subscribers(redis, "lockstep:retried"));
				assertThat(heard).as("own channel heard and both channels subscribed within 10 s").isTrue();
			}
			finally {
				client.shutdown();
			}
		}
	}

	private static long subscribers(RedisNode redis, String channel) {
		List<?> reply = (List<?>) redis.call("PUBSUB", "NUMSUB", channel);
		return (Long) reply.get(1);
	}

}
