package io.lockstep.integration;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.integration.support.locks.DistributedLock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@link LockstepLockRegistry} against a real Redis: what Spring Integration expects of a
 * {@code RenewableLockRegistry<DistributedLock>}.
 */
@RedisTest
class LockstepLockRegistryTests {

	private final RedisNode redis;

	private RedisClient client;

	private RedisLockTemplate template;

	private LockstepLockRegistry registry;

	private ExecutorService other;

	LockstepLockRegistryTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void start() {
		this.client = RedisClient.create(RedisURI.create(this.redis.host(), this.redis.port()));
		this.template = RedisLockTemplate.builder(this.client)
			.leaseTime(Duration.ofSeconds(3))
			.commandTimeout(Duration.ofSeconds(1))
			.build();
		this.registry = new LockstepLockRegistry(this.template);
		this.other = Executors.newSingleThreadExecutor();
		// a first connection can be slower than the command timeout on a loaded machine
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			try {
				return !this.template.isLocked("warm-up");
			}
			catch (RuntimeException ex) {
				return false;
			}
		});
	}

	@AfterEach
	void stop() {
		this.other.shutdownNow();
		this.template.close();
		this.client.shutdown();
	}

	@Test
	void locksAreOwnedByTheLockingThreadAndReentrantForIt() throws Exception {
		DistributedLock lock = this.registry.obtain("orders");
		assertThat(this.registry.obtain("orders")).as("the same lock for equal keys").isSameAs(lock);
		lock.lock();
		assertThat(lock.tryLock(1, TimeUnit.SECONDS)).as("re-entry").isTrue();
		assertThat(onOtherThread(lock::tryLock)).as("tryLock by another thread").isFalse();
		assertThat(onOtherThread(() -> lock.tryLock(200, TimeUnit.MILLISECONDS))).isFalse();
		assertThat(failureOnOtherThread(lock::unlock)).as("unlock by another thread")
			.startsWith("IllegalMonitorStateException")
			.contains("orders");
		lock.unlock();
		assertThat(this.template.isLocked("orders")).as("held until the last unlock").isTrue();
		lock.unlock();
		assertThat(this.template.isLocked("orders")).isFalse();
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition);
	}

	@Test
	void lockWithTtlTakesAFixedLeaseAndRenewLockExtendsIt() throws Exception {
		DistributedLock lock = this.registry.obtain("report");
		lock.lock(Duration.ofMillis(800));
		long first = this.template.leaseRemaining("report").orElseThrow().toMillis();
		assertThat(first).as("the fixed lease of lock(ttl)").isBetween(1L, 800L);
		this.registry.renewLock("report", Duration.ofSeconds(10));
		long renewed = this.template.leaseRemaining("report").orElseThrow().toMillis();
		assertThat(renewed).as("after renewLock(key, 10s)").isBetween(8_000L, 10_000L);
		this.registry.renewLock("report");
		long again = this.template.leaseRemaining("report").orElseThrow().toMillis();
		assertThat(again).as("renewLock(key): the lease it was taken with").isBetween(1L, 800L);
		assertThat(failureOnOtherThread(() -> this.registry.renewLock("report"))).as("renewLock by another thread")
			.startsWith("IllegalStateException")
			.contains("not held by thread");
		// fixed: nothing renews it, and another thread takes it once it ran out
		await("free once the fixed lease ran out").atMost(Duration.ofSeconds(10))
			.until(() -> onOtherThreadQuietly(() -> {
				boolean got = lock.tryLock();
				if (got) {
					lock.unlock();
				}
				return got;
			}));
		assertThatIllegalStateException().isThrownBy(() -> this.registry.renewLock("report"))
			.withMessageContaining("lease was lost");
		System.out.printf("registry: lock(800ms) left %d ms, renewLock(10s) %d ms, renewLock() %d ms%n", first, renewed,
				again);
		assertThatExceptionOfType(io.lockstep.LockLostException.class).isThrownBy(lock::unlock);
	}

	@Test
	void tryLockWithWaitAndTtlAndTheTemplatesWatchdogLease() throws Exception {
		DistributedLock lock = this.registry.obtain("batch");
		assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(5))).isTrue();
		assertThat(this.template.leaseRemaining("batch").orElseThrow().toMillis()).isBetween(1L, 5_000L);
		lock.unlock();
		Lock watched = this.registry.obtain("watched");
		watched.lock();
		// the template's 3 s watchdog lease, renewed past its end
		assertThat(Eventually.holds(Duration.ofSeconds(6), () -> false)).isFalse();
		assertThat(onOtherThread(watched::tryLock)).as("still held after two leases").isFalse();
		this.registry.renewLock("watched");
		watched.unlock();
		assertThat(this.template.isLocked("watched")).isFalse();
	}

	private boolean onOtherThread(java.util.concurrent.Callable<Boolean> call) throws Exception {
		return this.other.submit(call).get(30, TimeUnit.SECONDS);
	}

	/** What the action threw on another thread, as "SimpleName: message". */
	private String failureOnOtherThread(Runnable action) throws Exception {
		return this.other.submit(() -> {
			try {
				action.run();
				return "nothing thrown";
			}
			catch (RuntimeException ex) {
				return ex.getClass().getSimpleName() + ": " + ex.getMessage();
			}
		}).get(30, TimeUnit.SECONDS);
	}

	private boolean onOtherThreadQuietly(java.util.concurrent.Callable<Boolean> call) {
		try {
			return onOtherThread(call);
		}
		catch (Exception ex) {
			return false;
		}
	}

}
