package io.lockstep.test.starter;

import java.util.Properties;

import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisProcesses;
import io.lockstep.test.support.LockAssert;
import io.lockstep.test.support.LockedCall;
import io.lockstep.test.support.TestLocks;
import io.lockstep.test.support.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The test application on a real {@code redis-server} of its own ({@link TestRedis}):
 * locks land in that server, {@link TestLocks} and {@link LockAssert} tell a locked call
 * from an unlocked one, and {@link TestLocks#clear()} frees what a test left taken.
 */
@SpringBootTest
@TestRedis
class TestRedisTests {

	@Autowired
	private OrderService orders;

	@Autowired
	private Stock stock;

	@Autowired
	private TestLocks locks;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private StringRedisTemplate redis;

	@Value("${spring.data.redis.port}")
	private int port;

	@AfterEach
	void clearLocks() {
		this.stock.onDeduct((orderId) -> {
		});
		this.locks.clear();
	}

	@Test
	void locksLiveInARedisServerThatThisJvmStartedOnAFreePort(@Autowired RedisConnectionFactory connections) {
		Properties server = connections.getConnection().serverCommands().info("server");
		long pid = Long.parseLong(server.getProperty("process_id"));
		System.out.printf("@TestRedis: %s on 127.0.0.1:%d, PID %d%n", server.getProperty("redis_version"), this.port,
				pid);
		assertThat(this.port).isNotEqualTo(6379);
		assertThat(RedisProcesses.livePids()).contains(pid);
		assertThat(this.lockTemplate).isInstanceOf(RedisLockTemplate.class);
		try (LockHandle lock = this.lockTemplate.named("orders").acquire("42")) {
			assertThat(this.redis.hasKey("lockstep:orders:42")).isTrue();
		}
		assertThat(this.redis.hasKey("lockstep:orders:42")).isFalse();
	}

	@Test
	void aLockedMethodPassesTheAssertion() {
		this.orders.place("42");
		LockedCall call = this.locks.assertRanUnderLock("OrderService.place", "orders:42");
		assertThat(call.lockKeys()).containsExactly("orders:42");
		assertThat(call.fencingToken()).isPresent();
	}

	@Test
	void anUnlockedMethodFailsTheAssertionWithAMessageThatSaysWhy() {
		this.orders.browse("42");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.locks.assertRanUnderLock("OrderService.browse", "orders:42"))
			.withMessageStartingWith("Expected OrderService.browse to have run under the lock 'orders:42', "
					+ "but no call of it was recorded (recorded: none).")
			.withMessageContaining("is OrderService.browse annotated with @DistributedLock?");
	}

	@Test
	void aCallFromInsideTheBeanFailsTheAssertion() {
		this.orders.placeFromInside("42");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.locks.assertRanUnderLock("OrderService.place", "orders:42"))
			.withMessageContaining("no call of it was recorded")
			.withMessageContaining("A call from inside the same bean bypasses the proxy");
	}

	@Test
	void aCallUnderAnotherKeyFailsTheAssertionNamingTheKeysItHeld() {
		this.orders.place("41");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.locks.assertRanUnderLock("OrderService.place", "orders:42"))
			.withMessage("Expected OrderService.place to have run under the lock 'orders:42', but its 1 call(s) "
					+ "ran under: [orders:41]");
	}

	@Test
	void lockAssertInsideACollaboratorSeesTheCallersLock() {
		this.stock.onDeduct((orderId) -> LockAssert.assertLocked("orders:" + orderId));
		assertThat(this.orders.place("42")).isEqualTo("placed 42");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.orders.browse("42"))
			.withMessageContaining("to hold the lock 'orders:42', but it holds none.")
			.withMessageContaining("A call from inside the same bean bypasses the proxy");
	}

	@Test
	void clearFreesALockThatAJobKeepsTakenAndKeepsTheFencingCounter() {
		assertThat(this.orders.report()).isTrue();
		assertThat(this.orders.report()).as("the lock is kept 30s after a run: skipped").isNull();
		long before = this.lockTemplate.named("orders").execute("1", LockHandle::fencingToken);

		assertThat(this.locks.clear()).isEqualTo(1);

		assertThat(this.redis.keys("lockstep:*")).containsExactly("lockstep:__fence");
		assertThat(this.orders.report()).isTrue();
		assertThat(this.lockTemplate.named("orders").execute("1", LockHandle::fencingToken)).isGreaterThan(before);
		assertThat(this.locks.calls()).extracting(LockedCall::method).containsExactly("OrderService.report");
	}

	@Test
	void clearDeletesOnlyKeysUnderTheKeyPrefix() {
		this.redis.opsForValue().set("app:cache", "kept");
		this.redis.opsForValue().set("lockstep:orders:7", "left by a crashed holder");
		assertThat(this.locks.clear()).isEqualTo(1);
		assertThat(this.redis.hasKey("app:cache")).isTrue();
		assertThat(this.redis.hasKey("lockstep:orders:7")).isFalse();
		this.redis.delete("app:cache");
	}

}
