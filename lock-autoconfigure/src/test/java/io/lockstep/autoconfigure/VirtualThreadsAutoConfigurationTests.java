package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockLostListener;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code spring.threads.virtual.enabled} for the threads Lockstep starts: with it (on JDK
 * 21+) the lock-lost listeners run on a virtual thread, without it on the platform thread
 * {@code lockstep-events}; the watchdog stays a platform thread either way.
 */
@RedisTest
class VirtualThreadsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withUserConfiguration(LostListener.class)
		// a lease of 6s: the command timeout is then the default 2s (a third of it),
		// which
		// the first lock of a fresh context fits on a loaded machine; 500ms (a lease of
		// 1.5s) did not always (FirstLockAfterStartUpTests prints what it costs)
		.withPropertyValues("lockstep.lease-time=6s");

	@Test
	void listenersRunOnAVirtualThreadWhenTheApplicationAsksForThem(RedisNode redis) {
		boolean available = Runtime.version().feature() >= 21;
		this.contextRunner
			.withPropertyValues("spring.data.redis.port=" + redis.port(), "spring.threads.virtual.enabled=true")
			.run((context) -> {
				Thread listener = loseALease(context.getBean(LockTemplate.class), context.getBean(LostListener.class),
						redis);
				System.out.printf(
						"spring.threads.virtual.enabled=true on JDK %d: lock-lost listener on '%s', " + "virtual %s%n",
						Runtime.version().feature(), listener.getName(), isVirtual(listener));
				assertThat(isVirtual(listener)).isEqualTo(available);
				assertThat(listener.getName()).startsWith("lockstep-events");
				assertThat(watchdogIsPlatform()).isTrue();
			});
	}

	@Test
	void listenersRunOnAPlatformThreadByDefault(RedisNode redis) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			Thread listener = loseALease(context.getBean(LockTemplate.class), context.getBean(LostListener.class),
					redis);
			assertThat(isVirtual(listener)).isFalse();
			assertThat(listener.getName()).isEqualTo("lockstep-events");
		});
	}

	/**
	 * Takes a lock, deletes its key: the next renewal finds it gone. Only the release of
	 * the lost lock may fail (it says so with {@link LockLostException}); a failed
	 * acquisition fails the test as itself.
	 */
	private static Thread loseALease(LockTemplate locks, LostListener listener, RedisNode redis) throws Exception {
		LockHandle lock = locks.acquire("virtual");
		try {
			redis.call("DEL", "lockstep:virtual");
			assertThat(listener.told.await(10, TimeUnit.SECONDS)).as("listener told").isTrue();
		}
		finally {
			try {
				lock.close();
			}
			catch (LockLostException ex) {
				// closing a lost lock says so
			}
		}
		Thread thread = listener.thread.get();
		assertThat(thread).as("the thread the listener ran on").isNotNull();
		return thread;
	}

	private static boolean watchdogIsPlatform() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().equals("lockstep-watchdog"))
			.noneMatch(VirtualThreadsAutoConfigurationTests::isVirtual);
	}

	private static boolean isVirtual(Thread thread) {
		try {
			return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (NoSuchMethodException ex) {
			return false;
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class LostListener {

		final CountDownLatch told = new CountDownLatch(1);

		final AtomicReference<Thread> thread = new AtomicReference<>();

		@Bean
		LockLostListener recordingListener() {
			return (event) -> {
				this.thread.set(Thread.currentThread());
				this.told.countDown();
			};
		}

	}

}
