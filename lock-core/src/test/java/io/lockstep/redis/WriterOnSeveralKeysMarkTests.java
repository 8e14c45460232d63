package io.lockstep.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockstep.LockHandle;
import io.lockstep.internal.redis.LockCommands;
import io.lockstep.internal.redis.LockScripts;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The mark of a writer on several keys ({@code "~w"} in a key's waiter table) and the key
 * a release keeps for it ({@code "~w:<owner>"}) once that writer is gone: readers and
 * other writers should not wait for a writer that no longer waits.
 */
@RedisTest
class WriterOnSeveralKeysMarkTests {

	private static final String A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	private static final String B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

	private static final String W = "cccccccccccccccccccccccccccccccc";

	private final RedisNode redis;

	private ScriptRunner scripts;

	WriterOnSeveralKeysMarkTests(RedisNode redis) {
		this.redis = redis;
	}

	@BeforeEach
	void connect() {
		this.scripts = new ScriptRunner(this.redis);
	}

	@AfterEach
	void disconnect() {
		this.scripts.close();
	}

	/**
	 * A reader holds k; a writer on several keys waits and marks k; the reader leaves, so
	 * release.lua keeps k for the writer ("~w:&lt;writer&gt;:w"); the writer then gives
	 * up and leaves (leave.lua, which takes its mark off). The key it was kept for should
	 * be free now: no one holds it and no one waits for it.
	 */
	@Test
	void aKeyKeptForAWriterOnSeveralKeysIsFreedWhenThatWriterLeaves() {
		assertThat(this.scripts.read(A, 30_000).get(0)).isEqualTo(1L);
		assertThat(((Number) this.scripts.writerOnSeveralKeys(W).get(0)).longValue()).isZero();
		assertThat((String) this.redis.call("HGET", "t", "~w")).startsWith(W + ":");
		assertThat(this.scripts.release(A)).isEqualTo(1L);
		assertThat((String) this.redis.call("GET", "k")).isEqualTo("~w:" + W + ":w");
		this.scripts.leave(W);
		Object mark = this.redis.call("HGET", "t", "~w");
		Object value = this.redis.call("GET", "k");
		Object pttl = this.redis.call("PTTL", "k");
		List<Long> reader = this.scripts.read(B, 30_000);
		System.out.printf("after the writer left: mark %s, key %s (PTTL %s ms); a new reader got %s%n", mark, value,
				pttl, reader);
		assertThat(mark).as("the writer's mark is taken off by its leave").isNull();
		assertThat(value).as("the key kept for a writer that left is freed").isNull();
		assertThat(reader.get(0)).as("a reader gets the free key").isEqualTo(1L);
	}

	/**
	 * Through the engine: readers hold doc; a writer on doc and other waits (its mark is
	 * in doc's waiter table); its thread is interrupted while it waits, so it gives up,
	 * and its leave takes the mark off. A reader that comes after that, with no writer
	 * waiting any more, should join the readers at once.
	 */
	@Test
	void aReaderJoinsReadersAtOnceAfterAWaitingWriterOnSeveralKeysGaveUp() throws Exception {
		RedisClient writerClient = TestLocks.client(this.redis);
		RedisClient laterClient = TestLocks.client(this.redis);
		try (RedisLockTemplate readers = TestLocks.builder(this.scripts.client()).build();
				RedisLockTemplate writer = TestLocks.builder(writerClient).waitTime(Duration.ofSeconds(30)).build();
				RedisLockTemplate later = TestLocks.builder(laterClient).waitTime(Duration.ZERO).build();
				StatefulRedisConnection<String, String> probe = this.scripts.client().connect()) {
			TestLocks.warmUp(readers, writer, later);
			try (LockHandle first = readers.read().acquire("doc")) {
				CompletableFuture<Throwable> ended = new CompletableFuture<>();
				Thread writerThread = new Thread(() -> {
					try (LockHandle all = writer.acquireAll(List.of("doc", "other"))) {
						ended.complete(null);
					}
					catch (Throwable ex) {
						ended.complete(ex);
					}
				}, "writer-on-several-keys");
				writerThread.start();
				assertThat(TestLocks.eventually(Duration.ofSeconds(10),
						() -> probe.sync().hget("lockstep:__w:doc", "~w") != null))
					.as("the waiting writer marked doc")
					.isTrue();
				writerThread.interrupt();
				Throwable failure = ended.get(10, TimeUnit.SECONDS);
				assertThat(failure).as("the interrupted writer gave up").isNotNull();
				// the leave is sent without the interrupted thread waiting for it
				// (Releaser.land): the reader comes once it has landed
				String mark = probe.sync().hget("lockstep:__w:doc", "~w");
				assertThat(TestLocks.eventually(Duration.ofSeconds(10),
						() -> probe.sync().hget("lockstep:__w:doc", "~w") == null))
					.as("the writer's leave took its mark off doc")
					.isTrue();
				long gaveUp = System.nanoTime();
				Optional<LockHandle> second = later.read().tryAcquire("doc");
				long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - gaveUp);
				second.ifPresent(LockHandle::close);
				System.out.printf(
						"writer on several keys gave up (%s); its mark after that: %s; a later reader %s (%d ms)%n",
						failure, mark, second.isPresent() ? "joined" : "was refused", tookMillis);
				assertThat(second).as("no writer waits any more: a reader joins the readers").isPresent();
			}
		}
		finally {
			writerClient.shutdown();
			laterClient.shutdown();
		}
	}

}
