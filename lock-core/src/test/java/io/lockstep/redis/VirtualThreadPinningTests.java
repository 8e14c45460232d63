package io.lockstep.redis;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.RedisClient;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * 2,000 virtual-thread callers lock 20 keys against a real Redis on a fresh client (so
 * they also open its connections, the pub/sub one included), with JFR recording every
 * {@code jdk.VirtualThreadPinned} event: none has a Lockstep frame on its stack. Another
 * client warms up first, so that the JVM has loaded Lockstep's classes: virtual threads
 * that load the same class at once pin while they wait for the class loader, whatever the
 * code. A control thread that pins on purpose (it parks inside a class initializer, which
 * pins on every JDK) shows that the recording sees pinning. Needs JDK 21+
 * ({@code .ci/run} runs it with {@code -Djvm=} on JDK 25); on JDK 24+ a monitor no longer
 * pins, so the check of Lockstep's own monitors bites on JDK 21-23.
 */
@RedisTest
class VirtualThreadPinningTests {

	private static final int CALLERS = 2_000;

	private static final int KEYS = 20;

	@Test
	void twoThousandVirtualThreadCallersPinNoCarrierInLockstepCode(RedisFixture fixture) throws Exception {
		Method ofVirtual = virtualThreads();
		assumeTrue(ofVirtual != null,
				"virtual threads need JDK 21+ (.ci/run runs this test on JDK 25); this is " + Runtime.version());
		RedisNode redis = fixture.standalone();
		warmUp(ofVirtual, redis);
		RedisClient client = TestLocks.client(redis);
		Path file = Files.createTempFile("lockstep-pinning", ".jfr");
		try (Recording recording = new Recording();
				RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(60)).build()) {
			recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
			recording.start();
			AtomicInteger acquired = new AtomicInteger();
			AtomicInteger failures = new AtomicInteger();
			CountDownLatch done = new CountDownLatch(CALLERS + 1);
			start(ofVirtual, () -> {
				try {
					Pinning.touch();
				}
				finally {
					done.countDown();
				}
			});
			for (int i = 0; i < CALLERS; i++) {
				String key = "pinned-" + (i % KEYS);
				start(ofVirtual, () -> {
					try {
						locks.execute(key, (lock) -> {
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
							return acquired.incrementAndGet();
						});
					}
					catch (RuntimeException ex) {
						failures.incrementAndGet();
					}
					finally {
						done.countDown();
					}
				});
			}
			assertThat(done.await(120, TimeUnit.SECONDS)).as("all %d callers done", CALLERS).isTrue();
			recording.stop();
			recording.dump(file);
			// the recording holds other events too (Lettuce records its own)
			List<RecordedEvent> events = RecordingFile.readAllEvents(file)
				.stream()
				.filter((event) -> event.getEventType().getName().equals("jdk.VirtualThreadPinned"))
				.toList();
			long control = events.stream().filter((event) -> has(event, Pinning.class.getName())).count();
			List<RecordedEvent> lockstep = events.stream()
				.filter((event) -> has(event, "io.lockstep.") && !has(event, Pinning.class.getName()))
				.toList();
			System.out.printf("%,d virtual-thread callers on %d keys (JDK %s): %,d acquired, %d failures; "
					+ "jdk.VirtualThreadPinned events: %d in all, %d with a Lockstep frame, %d of the control%n",
					CALLERS, KEYS, Runtime.version(), acquired.get(), failures.get(), events.size(), lockstep.size(),
					control);
			lockstep.stream().limit(3).forEach(VirtualThreadPinningTests::print);
			assertThat(acquired.get()).isEqualTo(CALLERS);
			assertThat(control).as("pinned events of the control (the recording sees pinning)").isPositive();
			assertThat(lockstep).as("pinned events with a Lockstep frame").isEmpty();
		}
		finally {
			client.shutdown();
			Files.deleteIfExists(file);
		}
	}

	/**
	 * Another client's 200 virtual-thread callers, on the same keys: loads the classes.
	 */
	private static void warmUp(Method ofVirtual, RedisNode redis) throws Exception {
		RedisClient client = TestLocks.client(redis);
		try (RedisLockTemplate locks = TestLocks.builder(client).waitTime(Duration.ofSeconds(60)).build()) {
			CountDownLatch done = new CountDownLatch(200);
			for (int i = 0; i < 200; i++) {
				String key = "pinned-" + (i % KEYS);
				start(ofVirtual, () -> {
					try {
						locks.execute(key, (lock) -> {
							LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
							return null;
						});
					}
					finally {
						done.countDown();
					}
				});
			}
			assertThat(done.await(60, TimeUnit.SECONDS)).as("warm-up done").isTrue();
		}
		finally {
			client.shutdown();
		}
	}

	private static void print(RecordedEvent event) {
		System.out.printf("pinned %d ms (%s, %s):%n", event.getDuration().toMillis(), field(event, "blockingOperation"),
				field(event, "pinnedReason"));
		event.getStackTrace()
			.getFrames()
			.stream()
			.limit(16)
			.forEach((frame) -> System.out.printf("    %s.%s line %d%n", frame.getMethod().getType().getName(),
					frame.getMethod().getName(), frame.getLineNumber()));
	}

	/** A field of the event (JDK 24+ names the blocking operation and the reason). */
	private static String field(RecordedEvent event, String name) {
		return event.hasField(name) ? String.valueOf(event.getValue(name)) : "-";
	}

	/**
	 * With {@code virtualThreads(true)}, a reactive acquisition completes (and its work
	 * starts) on a virtual worker thread.
	 */
	@Test
	void reactiveAcquisitionsCompleteOnVirtualWorkersWhenAskedFor(RedisFixture fixture) throws Exception {
		assumeTrue(virtualThreads() != null,
				"virtual threads need JDK 21+ (.ci/run runs this test on JDK 25); " + "this is " + Runtime.version());
		RedisClient client = TestLocks.client(fixture.standalone());
		try (RedisLockTemplate locks = TestLocks.builder(client).virtualThreads(true).build();
				RedisLockTemplate holder = TestLocks.builder(client).build()) {
			LockHandle held = holder.acquire("reactive");
			Mono<Thread> waiting = ReactiveLocks.of(locks)
				.execute("reactive", (lock) -> Mono.fromCallable(Thread::currentThread));
			CompletableFuture<Thread> worker = waiting.toFuture();
			held.close();
			Thread thread = worker.get(30, TimeUnit.SECONDS);
			boolean virtual = (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
			System.out.printf("virtualThreads(true): a reactive acquisition woken by the release ran its work on "
					+ "'%s', virtual %s%n", thread.getName(), virtual);
			assertThat(virtual).isTrue();
			assertThat(thread.getName()).startsWith("lockstep-async-");
		}
		finally {
			client.shutdown();
		}
	}

	private static boolean has(RecordedEvent event, String classPrefix) {
		return event.getStackTrace() != null && event.getStackTrace()
			.getFrames()
			.stream()
			.map(RecordedFrame::getMethod)
			.anyMatch((method) -> method.getType().getName().startsWith(classPrefix));
	}

	private static void start(Method ofVirtual, Runnable task) throws Exception {
		Object builder = ofVirtual.invoke(null);
		Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class).invoke(builder, task);
	}

	private static Method virtualThreads() {
		try {
			return Thread.class.getMethod("ofVirtual");
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
	}

	/** Parks in its class initializer: a virtual thread pins its carrier there. */
	static final class Pinning {

		static {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}

		static void touch() {
		}

	}

}
