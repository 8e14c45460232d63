package io.lockstep.redis;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion and fencing under contention, checked in a separate ledger Redis: an
 * occupancy counter (overlaps), a non-atomic read-modify-write (lost updates) and the
 * order of fencing tokens.
 */
@RedisTest
class MutualExclusionTests {

	private static final Pattern RESULT = Pattern.compile("RESULT overlaps=(\\d+) violations=(\\d+) done=(\\d+)");

	private RedisNode lockNode;

	private RedisNode ledgerNode;

	private RedisClient lockClient;

	private RedisClient ledgerClient;

	private RedisCommands<String, String> ledger;

	@BeforeEach
	void start(RedisFixture redis) {
		this.lockNode = redis.standalone();
		this.ledgerNode = redis.standalone();
		this.lockClient = TestLocks.client(this.lockNode);
		this.ledgerClient = TestLocks.client(this.ledgerNode);
		this.ledger = this.ledgerClient.connect().sync();
	}

	@AfterEach
	void stop() {
		this.ledgerClient.shutdown();
		this.lockClient.shutdown();
	}

	@Test
	void eightThreadsInOneJvmNeverOverlap() throws Exception {
		try (RedisLockTemplate locks = TestLocks.builder(this.lockClient).waitTime(Duration.ofMinutes(1)).build()) {
			Contention contention = new Contention(locks, this.ledger, "stock:1");
			long start = System.nanoTime();
			contention.run(8, 2_000, Duration.ofMinutes(3));
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out.printf(
					"one JVM: %d overlaps, %d fencing-order violations in %d acquisitions (8 threads), "
							+ "counter %s, %d ms, %.0f acquisitions/s%n",
					contention.overlaps.get(), contention.tokenViolations.get(), contention.done.get(),
					this.ledger.get("counter:stock:1"), millis, contention.done.get() * 1000.0 / millis);
			assertThat(contention.done.get()).isEqualTo(16_000);
			assertThat(contention.overlaps.get()).isZero();
			assertThat(contention.tokenViolations.get()).isZero();
			assertThat(this.ledger.get("counter:stock:1")).isEqualTo("16000");
		}
	}

	@Test
	void twoJvmsNeverOverlap() throws Exception {
		int[] result = contendAcrossTwoJvms("stock:2", 4, 1_000);
		System.out.printf("two JVMs: %d overlaps, %d fencing-order violations in %d acquisitions (2 x 4 threads), "
				+ "counter %s%n", result[0], result[1], result[2], this.ledger.get("counter:stock:2"));
		assertThat(result[2]).isEqualTo(8_000);
		assertThat(result[0]).isZero();
		assertThat(this.ledger.get("counter:stock:2")).isEqualTo("8000");
	}

	@Test
	void fencingTokensStrictlyIncreaseAcrossThreadsAndJvms() throws Exception {
		int[] result = contendAcrossTwoJvms("stock:3", 2, 2_500);
		System.out.printf(
				"fencing: %d acquisitions over 4 threads in 2 JVMs, %d tokens lower than the previous " + "holder's%n",
				result[2], result[1]);
		assertThat(result[2]).isEqualTo(10_000);
		assertThat(result[1]).isZero();
	}

	/**
	 * Runs the contention in this JVM and a second one at once; returns {overlaps,
	 * violations, done}.
	 */
	private int[] contendAcrossTwoJvms(String key, int threads, int iterations) throws Exception {
		try (WorkerJvm other = TestLocks.worker("contend", Integer.toString(this.lockNode.port()),
				Integer.toString(this.ledgerNode.port()), key, Integer.toString(threads), Integer.toString(iterations));
				RedisLockTemplate locks = TestLocks.builder(this.lockClient).waitTime(Duration.ofMinutes(2)).build()) {
			other.await("READY", Duration.ofSeconds(60));
			Contention contention = new Contention(locks, this.ledger, key);
			other.send("GO");
			contention.run(threads, iterations, Duration.ofMinutes(4));
			Matcher remote = RESULT.matcher(other.await("RESULT", Duration.ofMinutes(4)));
			assertThat(remote.matches()).isTrue();
			return new int[] { (int) contention.overlaps.get() + Integer.parseInt(remote.group(1)),
					(int) contention.tokenViolations.get() + Integer.parseInt(remote.group(2)),
					(int) contention.done.get() + Integer.parseInt(remote.group(3)) };
		}
	}

}
