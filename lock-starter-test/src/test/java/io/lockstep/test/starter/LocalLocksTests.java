package io.lockstep.test.starter;

import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.local.LocalLockTemplate;
import io.lockstep.test.support.LocalLocks;
import io.lockstep.test.support.LockAssert;
import io.lockstep.test.support.TestLocks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The test application with JVM-local locks ({@link LocalLocks}) and no Redis at all:
 * {@code spring.data.redis.port} points at a port nothing listens on, and locks still
 * work, are recorded and are cleared.
 */
@SpringBootTest(properties = "spring.data.redis.port=1")
@LocalLocks
class LocalLocksTests {

	@Autowired
	private OrderService orders;

	@Autowired
	private Stock stock;

	@Autowired
	private TestLocks locks;

	@Autowired
	private LockTemplate lockTemplate;

	@AfterEach
	void clearLocks() {
		this.stock.onDeduct((orderId) -> {
		});
		this.locks.clear();
	}

	@Test
	void theLockTemplateIsJvmLocal() {
		assertThat(this.lockTemplate).isInstanceOf(LocalLockTemplate.class);
		assertThat(((LockMonitor) this.lockTemplate).isDistributed()).isFalse();
	}

	@Test
	void aLockedMethodPassesTheAssertionAndAnUnlockedOneFailsIt() {
		this.stock.onDeduct((orderId) -> LockAssert.assertLocked("orders:" + orderId));
		assertThat(this.orders.place("42")).isEqualTo("placed 42");
		this.locks.assertRanUnderLock("OrderService.place", "orders:42");
		this.stock.onDeduct((orderId) -> LockAssert.assertNotLocked());
		this.orders.browse("42");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.locks.assertRanUnderLock("OrderService.browse", "orders:42"))
			.withMessageContaining("no call of it was recorded (recorded: [OrderService.place under [orders:42]])");
	}

	@Test
	void clearFreesALockThatAJobKeepsTaken() {
		assertThat(this.orders.report()).isTrue();
		assertThat(this.orders.report()).as("the lock is kept 30s after a run: skipped").isNull();
		assertThat(this.locks.clear()).isEqualTo(1);
		assertThat(this.orders.report()).isTrue();
	}

}
