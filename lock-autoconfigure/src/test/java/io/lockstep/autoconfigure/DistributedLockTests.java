package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLock;
import io.lockstep.DistributedLocks;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockKeyException;
import io.lockstep.LockLostEvent;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DistributedLock} against a real Redis: keys, reentrancy, failure policies,
 * futures and lost leases.
 */
@RedisTest
class DistributedLockTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withUserConfiguration(InventoryConfiguration.class)
		.withPropertyValues("lockstep.key-prefix=annotated:");

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
	}

	@Test
	void methodRunsHoldingTheLockOfItsKey() {
		run((context, inventory, locks) -> {
			inventory.state().body = () -> inventory.state().seen
				.set(locks.isLocked("sku-1") + " " + locks.isLocked("sku-2"));
			assertThat(inventory.reserve("sku-1")).isEqualTo("reserved sku-1");
			assertThat(inventory.state().seen).hasValue("true false");
			assertThat(locks.isLocked("sku-1")).isFalse();
		});
	}

	/**
	 * The pitfall the README warns of: the advice sits on the proxy, so a call from the
	 * same object runs the method without its lock.
	 */
	@Test
	void aCallFromTheSameBeanBypassesTheProxyAndRunsUnlocked() {
		this.contextRunner.withBean(SelfCalling.class).run((context) -> {
			SelfCalling bean = context.getBean(SelfCalling.class);
			assertThat(bean.locked()).as("through the proxy").isTrue();
			assertThat(bean.callsItself()).as("from the same bean").isFalse();
		});
	}

	@Test
	void keysCanUseParameterIndexesBeansAndTheMethod() {
		run((context, inventory, locks) -> {
			inventory.state().body = () -> inventory.state().seen
				.set(locks.isLocked("pair:a/2") + " " + locks.isLocked("bean-pair-reservePair"));
			inventory.reservePair("a", 2);
			assertThat(inventory.state().seen).hasValue("true false");
			inventory.state().body = () -> inventory.state().seen
				.set(String.valueOf(locks.isLocked("bean-reserveWithBean")));
			inventory.reserveWithBean();
			assertThat(inventory.state().seen).hasValue("true");
		});
	}

	@Test
	void collectionAndArrayKeysLockEveryElement() {
		run((context, inventory, locks) -> {
			inventory.state().body = () -> inventory.state().seen.set(locks.isLocked("x") + " " + locks.isLocked("y"));
			inventory.reserveAll(List.of("x", "y"));
			assertThat(inventory.state().seen).hasValue("true true");
			inventory.state().seen.set(null);
			inventory.reserveArray(new String[] { "y", "x" });
			assertThat(inventory.state().seen).hasValue("true true");
			assertThat(locks.isLocked("x") || locks.isLocked("y")).isFalse();
		});
	}

	@Test
	void collectionKeyFailsWhenAnyElementIsHeldElsewhere() throws Exception {
		run((context, inventory, locks) -> {
			try (OtherThread other = new OtherThread(); LockHandle held = other.call(() -> locks.acquire("y"))) {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> inventory.reserveAllNoWait(List.of("x", "y")));
				assertThat(inventory.state().runs).hasValue(0);
				assertThat(locks.isLocked("x")).isFalse();
			}
		});
	}

	@Test
	void nullKeyIsALockKeyExceptionAndTheMethodDoesNotRun() {
		run((context, inventory, locks) -> {
			assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> inventory.reserve(null))
				.withMessageContaining("Inventory.reserve(String)")
				.withMessageContaining("'#sku' evaluated to null");
			assertThat(inventory.state().runs).hasValue(0);
		});
	}

	@Test
	void emptyKeysAreLockKeyExceptionsAndTheMethodDoesNotRun() {
		run((context, inventory, locks) -> {
			assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> inventory.reserveAll(List.of()))
				.withMessageContaining("Inventory.reserveAll(List)")
				.withMessageContaining("evaluated to an empty collection");
			assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> inventory.reserveArray(new String[0]))
				.withMessageContaining("evaluated to an empty array");
			assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> inventory.reserve(" "))
				.withMessageContaining("evaluated to empty");
			assertThatExceptionOfType(LockKeyException.class)
				.isThrownBy(() -> inventory.reserveAll(java.util.Arrays.asList("a", null)))
				.withMessageContaining("an element that is null");
			assertThat(inventory.state().runs).hasValue(0);
		});
	}

	@Test
	void throwsLockAcquisitionExceptionAfterTheWaitTime() throws Exception {
		run((context, inventory, locks) -> {
			try (OtherThread other = new OtherThread(); LockHandle held = other.call(() -> locks.acquire("busy"))) {
				long start = System.nanoTime();
				assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> inventory.reserve("busy"))
					.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("annotated:busy"));
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(200),
						Duration.ofSeconds(4));
				assertThat(inventory.state().runs).hasValue(0);
			}
		});
	}

	@Test
	void skipReturnsNothingOfTheReturnTypeWithoutRunning() throws Exception {
		run((context, inventory, locks) -> {
			try (OtherThread other = new OtherThread(); LockHandle held = other.call(() -> locks.acquire("s"))) {
				assertThat(inventory.skipString("s")).isNull();
				assertThat(inventory.skipOptional("s")).isEmpty();
				assertThat(inventory.skipList("s")).isEmpty();
				assertThat(inventory.skipFuture("s")).isCompletedWithValue(Optional.empty());
				inventory.skipVoid("s");
				assertThat(inventory.state().runs).hasValue(0);
			}
			assertThat(inventory.skipOptional("s")).contains("ran s");
			assertThat(inventory.state().runs).hasValue(1);
		});
	}

	@Test
	void fallbackRunsWithTheArgumentsAndTheException() throws Exception {
		run((context, inventory, locks) -> {
			try (OtherThread other = new OtherThread(); LockHandle held = other.call(() -> locks.acquire("f"))) {
				assertThat(inventory.withFallback("f", 3)).isEqualTo("busy f 3 annotated:f");
				assertThat(inventory.withPlainFallback("f")).isEqualTo("plain busy f");
				assertThat(inventory.state().runs).hasValue(0);
			}
			assertThat(inventory.withFallback("f", 3)).isEqualTo("ran f 3");
		});
	}

	@Test
	void reentrantCallThroughTheProxyDoesNotWaitAndKeepsTheLock() throws Exception {
		run((context, inventory, locks) -> {
			try (OtherThread other = new OtherThread()) {
				inventory.state().body = () -> {
					try {
						inventory.state().seen.set(locks.isLocked("r") + " "
								+ other.call(() -> locks.tryAcquire("r").map(LockHandle::key).orElse("held")));
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
				};
				assertThat(inventory.outer("r")).isEqualTo("outer(inner r)");
				assertThat(inventory.state().seen).hasValue("true held");
				assertThat(locks.isLocked("r")).isFalse();
			}
		});
	}

	@Test
	void fencingTokenOfTheCallIsVisibleInside() {
		run((context, inventory, locks) -> {
			long first = inventory.fencingToken("t");
			long second = inventory.fencingToken("t");
			assertThat(second).isGreaterThan(first);
			assertThat(DistributedLocks.currentFencingToken()).isEmpty();
		});
	}

	@Test
	void completableFutureHoldsTheLockUntilItCompletes() throws Exception {
		run((context, inventory, locks) -> {
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> result = inventory.async("a", work);
			assertThat(result).isNotDone();
			assertThat(locks.isLocked("a")).isTrue();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> inventory.reserveNoWait("a"))
				.as("the calling thread does not re-enter a lock handed to the future");
			try (OtherThread other = new OtherThread()) {
				other.call(() -> work.complete("done"));
			}
			assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("done");
			assertThat(locks.isLocked("a")).isFalse();
		});
	}

	@Test
	void failedFutureReleasesTheLockAndKeepsItsFailure() {
		run((context, inventory, locks) -> {
			CompletableFuture<String> work = new CompletableFuture<>();
			CompletableFuture<String> result = inventory.async("af", work);
			work.completeExceptionally(new IllegalStateException("boom"));
			assertThat(result).failsWithin(Duration.ofSeconds(5))
				.withThrowableThat()
				.withRootCauseInstanceOf(IllegalStateException.class);
			assertThat(locks.isLocked("af")).isFalse();
		});
	}

	@Test
	void exceptionOfTheMethodReleasesTheLock() {
		run((context, inventory, locks) -> {
			inventory.state().body = () -> {
				throw new IllegalArgumentException("out of stock");
			};
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> inventory.reserve("e"));
			assertThat(locks.isLocked("e")).isFalse();
		});
	}

	@Test
	void lostLeaseEndsTheCallWithLockLostException() {
		run((context, inventory, locks) -> {
			CountDownLatch lost = context.getBean(LostLeases.class).latch;
			inventory.state().body = () -> await(lost);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> inventory.shortLease("l"))
				.withMessageContaining("annotated:l");
		});
	}

	@Test
	void interruptModeInterruptsTheGuardedThreadOnLeaseLoss() {
		this.contextRunner.withPropertyValues("lockstep.on-lease-lost=interrupt").run((context) -> {
			Inventory inventory = context.getBean(Inventory.class);
			AtomicReference<String> outcome = new AtomicReference<>();
			inventory.state().body = () -> {
				try {
					outcome.set(new CountDownLatch(1).await(10, TimeUnit.SECONDS) ? "counted" : "timed out");
				}
				catch (InterruptedException ex) {
					outcome.set("interrupted");
				}
			};
			assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> inventory.shortLease("i"));
			assertThat(outcome).hasValue("interrupted");
			Thread.interrupted();
		});
	}

	@Test
	void notifyModeDoesNotInterrupt() {
		run((context, inventory, locks) -> {
			CountDownLatch lost = context.getBean(LostLeases.class).latch;
			AtomicReference<Boolean> interrupted = new AtomicReference<>();
			inventory.state().body = () -> {
				await(lost);
				interrupted.set(Thread.currentThread().isInterrupted());
			};
			assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> inventory.shortLease("n"));
			assertThat(interrupted).hasValue(false);
		});
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(10, TimeUnit.SECONDS)).as("lease lost in time").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private void run(InventoryTest test) {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			test.run(context, context.getBean(Inventory.class),
					context.getBean(LockTemplate.class).withWaitTime(Duration.ZERO));
		});
	}

	@FunctionalInterface
	interface InventoryTest {

		void run(AssertableApplicationContext context, Inventory inventory, LockTemplate locks) throws Exception;

	}

	@Configuration(proxyBeanMethods = false)
	static class InventoryConfiguration {

		@Bean
		Inventory inventory(ObjectProvider<Inventory> self) {
			return new Inventory(self);
		}

		@Bean
		Keys keys() {
			return new Keys();
		}

		@Bean
		LostLeases lostLeases() {
			return new LostLeases();
		}

	}

	static class Keys {

		public String prefix() {
			return "bean-";
		}

	}

	static class LostLeases implements ApplicationListener<LockLostEvent> {

		final CountDownLatch latch = new CountDownLatch(1);

		@Override
		public void onApplicationEvent(LockLostEvent event) {
			this.latch.countDown();
		}

	}

	static class State {

		final AtomicInteger runs = new AtomicInteger();

		final AtomicReference<String> seen = new AtomicReference<>();

		volatile Runnable body = () -> {
		};

	}

	static class Inventory {

		private final State state = new State();

		private final ObjectProvider<Inventory> self;

		Inventory(ObjectProvider<Inventory> self) {
			this.self = self;
		}

		/** Through the proxy: a CGLIB proxy's own fields are not the target's. */
		State state() {
			return this.state;
		}

		private String ran(String result) {
			this.state.runs.incrementAndGet();
			this.state.body.run();
			return result;
		}

		@DistributedLock(key = "#sku", waitTime = "200ms")
		String reserve(String sku) {
			return ran("reserved " + sku);
		}

		@DistributedLock(key = "#sku", waitTime = "0")
		String reserveNoWait(String sku) {
			return ran("reserved " + sku);
		}

		@DistributedLock(key = "#p0 + '/' + #a1", name = "pair")
		String reservePair(String sku, int quantity) {
			return ran(sku + quantity);
		}

		@DistributedLock(key = "@keys.prefix() + #root.methodName")
		String reserveWithBean() {
			return ran("bean");
		}

		@DistributedLock(key = "#skus")
		void reserveAll(List<String> skus) {
			ran("all");
		}

		@DistributedLock(key = "#skus", waitTime = "0")
		void reserveAllNoWait(List<String> skus) {
			ran("all");
		}

		@DistributedLock(key = "#skus")
		void reserveArray(String[] skus) {
			ran("array");
		}

		@DistributedLock(key = "#sku", waitTime = "0", onLocked = OnLocked.SKIP)
		String skipString(String sku) {
			return ran("ran " + sku);
		}

		@DistributedLock(key = "#sku", waitTime = "0", onLocked = OnLocked.SKIP)
		Optional<String> skipOptional(String sku) {
			return Optional.of(ran("ran " + sku));
		}

		@DistributedLock(key = "#sku", waitTime = "0", onLocked = OnLocked.SKIP)
		List<String> skipList(String sku) {
			return List.of(ran("ran " + sku));
		}

		@DistributedLock(key = "#sku", waitTime = "0", onLocked = OnLocked.SKIP)
		CompletableFuture<Optional<String>> skipFuture(String sku) {
			return CompletableFuture.completedFuture(Optional.of(ran("ran " + sku)));
		}

		@DistributedLock(key = "#sku", waitTime = "0", onLocked = OnLocked.SKIP)
		void skipVoid(String sku) {
			ran("ran " + sku);
		}

		@DistributedLock(key = "#sku", waitTime = "0", fallback = "busy")
		String withFallback(String sku, int quantity) {
			return ran("ran " + sku + " " + quantity);
		}

		private String busy(String sku, int quantity, LockAcquisitionException ex) {
			return "busy " + sku + " " + quantity + " " + ex.getKey();
		}

		@DistributedLock(key = "#sku", waitTime = "0", fallback = "plainBusy")
		String withPlainFallback(String sku) {
			return ran("ran " + sku);
		}

		String plainBusy(String sku) {
			return "plain busy " + sku;
		}

		@DistributedLock(key = "#sku")
		String outer(String sku) {
			return "outer(" + this.self.getObject().inner(sku) + ")";
		}

		@DistributedLock(key = "#sku", waitTime = "0")
		String inner(String sku) {
			return ran("inner " + sku);
		}

		@DistributedLock(key = "#sku")
		long fencingToken(String sku) {
			return DistributedLocks.currentFencingToken().orElseThrow();
		}

		@DistributedLock(key = "#sku")
		CompletableFuture<String> async(String sku, CompletableFuture<String> work) {
			return work;
		}

		@DistributedLock(key = "#sku", leaseTime = "100ms")
		void shortLease(String sku) {
			ran("short");
		}

	}

	public static class SelfCalling {

		/** Whether the call holds a lock: it has a fencing token then. */
		@DistributedLock(key = "'self'")
		public boolean locked() {
			return DistributedLocks.currentFencingToken().isPresent();
		}

		public boolean callsItself() {
			return locked();
		}

	}

}
