package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisClient;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Edges of read/write locks and semaphores, each against a real redis-server: a reactive
 * re-entry asks the way it holds (no upgrade, no other number of permits), a reader held
 * back by a queued writer is let in as soon as that writer gives up, and a multi-key
 * plain lock refuses a semaphore's key.
 */
@RedisTest
class SharedLockEdgeTests {

	private RedisNode node;

	private RedisClient client;

	private RedisClient otherClient;

	@BeforeEach
	void start(RedisFixture redis) {
		this.node = redis.standalone();
		this.client = TestLocks.client(this.node);
		this.otherClient = TestLocks.client(this.node);
	}

	@AfterEach
	void stop() {
		this.otherClient.shutdown();
		this.client.shutdown();
	}

	/**
	 * A reactive subscription that holds a key's read lock and asks for its write lock:
	 * as on the blocking API, this must fail at once with a LockException. It must never
	 * run the write work while another reader holds the key.
	 */
	@Test
	void aReactiveWriteInsideAReadSubscriptionIsRefusedNotRunBesideAnotherReader() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(2)).build();
				RedisLockTemplate other = TestLocks.builder(this.otherClient).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			try (LockHandle otherReader = other.read().acquire("doc:r1")) {
				AtomicReference<String> seenByWriter = new AtomicReference<>();
				Mono<String> upgrade = locks.read()
					.execute("doc:r1", (outer) -> locks.write().execute("doc:r1", (inner) -> Mono.fromCallable(() -> {
						seenByWriter.set("write work ran; other reader held=" + otherReader.isHeld() + "; key value="
								+ this.node.call("GET", "lockstep:doc:r1"));
						return "wrote";
					})));
				Throwable failure = null;
				try {
					upgrade.block(Duration.ofSeconds(10));
				}
				catch (Throwable ex) {
					failure = ex;
				}
				System.out.println("reactive read -> write: "
						+ ((seenByWriter.get() != null) ? seenByWriter.get() : "refused: " + failure));
				assertThat(seenByWriter.get()).as("the write work ran while the key was read-held").isNull();
				assertThat(failure).isInstanceOf(LockException.class).hasMessageContaining("write lock");
			}
		}
	}

	/** Same hole with a semaphore: a permit holder that asks for another number. */
	@Test
	void aReactiveMismatchedSemaphoreInsideAPermitIsRefused() {
		try (RedisLockTemplate blocking = TestLocks.builder(this.client).waitTime(Duration.ofSeconds(2)).build()) {
			ReactiveLockTemplate locks = ReactiveLocks.of(blocking);
			AtomicReference<String> ran = new AtomicReference<>();
			Mono<String> nested = locks.withPermits(3)
				.execute("export:r2", (outer) -> locks.execute("export:r2", (inner) -> Mono.fromCallable(() -> {
					ran.set("plain (write) lock work ran inside a permit of a semaphore of 3");
					return "x";
				})));
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> nested.block(Duration.ofSeconds(10)));
			assertThat(ran.get()).isNull();
		}
	}

	/**
	 * The budget: an uncontended read acquire + release and an uncontended permit
	 * acquire + release each in at most 6 Redis commands, counted inside Lua.
	 */
	@Test
	void aReaderHeldBackByAWriterThatGaveUpIsLetInPromptly() throws Exception {
		RedisClient thirdClient = TestLocks.client(this.node);
		try (RedisLockTemplate holder = TestLocks.builder(this.client).build();
				RedisLockTemplate writers = TestLocks.builder(this.otherClient)
					.waitTime(Duration.ofSeconds(10))
					.build();
				RedisLockTemplate readers = TestLocks.builder(thirdClient).waitTime(Duration.ofSeconds(10)).build()) {
			TestLocks.warmUp(holder, writers, readers);
			readers.read().acquire("warm-read").close();
			List<Long> lateMillis = new ArrayList<>();
			for (int trial = 0; trial < 3; trial++) {
				String key = "doc:g" + trial;
				try (LockHandle first = holder.read().acquire(key)) {
					CompletableFuture<Long> writerGaveUp = new CompletableFuture<>();
					Thread writer = new Thread(() -> {
						try (LockHandle never = writers.write().acquire(key)) {
							writerGaveUp.completeExceptionally(new AssertionError("the writer got the read-held key"));
						}
						catch (LockException ex) {
							writerGaveUp.complete(System.nanoTime());
						}
					});
					writer.start();
					await("writer queued").atMost(Duration.ofSeconds(5))
						.until(() -> ((Long) this.node.call("LLEN", "lockstep:__q:" + key)) > 0);
					CompletableFuture<Long> readerIn = new CompletableFuture<>();
					Thread reader = new Thread(() -> {
						try (LockHandle second = readers.read().acquire(key)) {
							readerIn.complete(System.nanoTime());
						}
						catch (Throwable ex) {
							readerIn.completeExceptionally(ex);
						}
					});
					reader.start();
					assertThat(TestLocks.parkedFor(reader, Duration.ofMillis(50), Duration.ofSeconds(5))).isTrue();
					long lindex = TestLocks.commandCalls(this.node, "lindex");
					await("a refused re-check of the reader").atMost(Duration.ofSeconds(5))
						.until(() -> TestLocks.commandCalls(this.node, "lindex") > lindex);
					writer.interrupt();
					long gaveUp = writerGaveUp.get(10, TimeUnit.SECONDS);
					long in = readerIn.get(10, TimeUnit.SECONDS);
					lateMillis.add(TimeUnit.NANOSECONDS.toMillis(in - gaveUp));
					writer.join(10_000);
					reader.join(10_000);
				}
			}
			System.out.println("reader in after the queued writer gave up, ms per trial: " + lateMillis);
			assertThat(lateMillis).allMatch((late) -> late < 150);
		}
		finally {
			thirdClient.shutdown();
		}
	}

	/**
	 * "A plain lock on a semaphore's key is a LockException naming both, and nothing is
	 * acquired": also for a plain lock of several keys (acquire-all.lua).
	 */
	@Test
	void aMultiKeyPlainLockOnASemaphoresKeyIsRefused() {
		try (RedisLockTemplate locks = TestLocks.builder(this.client).build();
				RedisLockTemplate other = TestLocks.builder(this.otherClient)
					.waitTime(Duration.ofMillis(300))
					.build()) {
			try (LockHandle permit = locks.withPermits(3).acquire("export:m1")) {
				Throwable failure = null;
				Object result = null;
				try {
					result = other.acquireAll(List.of("export:m1", "other:m1"));
				}
				catch (Throwable ex) {
					failure = ex;
				}
				System.out.println("acquireAll on a semaphore's key: returned " + result + ", threw " + failure);
				assertThat(failure).isInstanceOf(LockException.class).hasMessageContaining("semaphore of 3 permits");
			}
		}
	}

}
