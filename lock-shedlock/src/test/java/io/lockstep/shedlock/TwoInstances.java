package io.lockstep.shedlock;

import java.time.Duration;
import java.time.Instant;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * Base of the provider tests: a real Redis, and two providers on two lock clients that
 * stand for two instances of an application; each test locks a name of its own (its
 * method's name).
 */
@RedisTest
abstract class TwoInstances {

	private static final Duration LONG = Duration.ofMinutes(5);

	final RedisNode redis;

	RedisClient client;

	RedisLockTemplate locks;

	RedisLockTemplate otherLocks;

	/** The provider of this instance. */
	LockstepLockProvider provider;

	/** The provider of the other instance. */
	LockstepLockProvider other;

	/** The lock name of the test. */
	String name;

	TwoInstances(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void start(TestInfo test) {
		this.client = client(this.redis.port());
		this.locks = RedisLockTemplate.builder(this.client).build();
		this.otherLocks = RedisLockTemplate.builder(this.client).build();
		this.provider = new LockstepLockProvider(this.locks);
		this.other = new LockstepLockProvider(this.otherLocks);
		this.name = test.getTestMethod().orElseThrow().getName();
		warmUp(this.provider, this.other);
	}

	@AfterEach
	void stop() {
		this.locks.close();
		this.otherLocks.close();
		this.client.shutdown();
	}

	/** The TTL of the test's lock key, in ms: -2 when there is none. */
	long pttl() {
		return pttl(this.name);
	}

	long pttl(String lockName) {
		return (Long) this.redis.call("PTTL", "lockstep:shedlock:" + lockName);
	}

	/**
	 * Connects the providers' lock clients and loads their scripts (a lock and an
	 * unlock), so that a short lease is not spent connecting.
	 */
	static void warmUp(LockstepLockProvider... providers) {
		for (LockstepLockProvider provider : providers) {
			provider.lock(config("warm-up")).orElseThrow().unlock();
		}
	}

	static LockConfiguration config(String name) {
		return config(name, LONG, Duration.ZERO);
	}

	static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
		return new LockConfiguration(Instant.now(), name, lockAtMostFor, lockAtLeastFor);
	}

	static long millisSince(long startNanos) {
		return Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
	}

	/**
	 * A client whose first connection is made already, so that starting its event loops
	 * does not count against the lock's command timeout.
	 */
	static RedisClient client(int port) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().ping();
		}
		return client;
	}

}
