package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.LockHandle;
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
		.withPropertyValues("lockstep.lease-time=1500ms");

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

	/** Takes a lock, deletes its key: the next renewal finds it gone. */
	private static Thread loseALease(LockTemplate locks, LostListener listener, RedisNode redis) throws Exception {
		try (LockHandle lock = locks.acquire("virtual")) {
			redis.call("DEL", "lockstep:virtual");
			assertThat(listener.told.await(10, TimeUnit.SECONDS)).as("listener told").isTrue();
		}
		catch (RuntimeException ex) {
			// closing a lost lock says so
		}
		return listener.thread.get();
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
