package io.lockstep.faults;

import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 100,000 acquisitions by 2 JVMs of 8 threads each, half on one hot key and half spread
 * over 64 keys, each running a non-atomic read-modify-write in the ledger: no overlap, no
 * lost update, no key left. The control runs the same critical section without the lock.
 */
@Tag("fault")
@RedisTest
class LoadFaultTests {

	private static final Pattern RESULT = Pattern.compile("RESULT overlaps=(\\d+) done=(\\d+)");

	private static final int THREADS = 8;

	private static final int PER_THREAD = 3_125;

	private static final int SPREAD_KEYS = 64;

	@AfterAll
	static void printTable() {
		Figures.printTable();
	}

	@Test
	void oneHundredThousandAcquisitionsByTwoJvmsNeverOverlapNorLoseAnUpdate(RedisFixture fixture) throws Exception {
		RedisNode redis = fixture.standalone();
		RedisNode ledgerNode = fixture.standalone();
		RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		try (Ledger ledger = new Ledger(ledgerNode.port());
				WorkerJvm other = new WorkerJvm(FaultWorker.class, "load", Integer.toString(redis.port()),
						Integer.toString(ledgerNode.port()), Integer.toString(THREADS), Integer.toString(PER_THREAD),
						Integer.toString(PER_THREAD), Integer.toString(SPREAD_KEYS));
				RedisLockTemplate locks = RedisLockTemplate.builder(client).waitTime(Duration.ofMinutes(2)).build()) {
			other.await("READY", Duration.ofSeconds(60));
			Load load = new Load(locks, ledger);
			long start = System.nanoTime();
			other.send("GO");
			load.run(THREADS, PER_THREAD, PER_THREAD, SPREAD_KEYS, Duration.ofMinutes(4));
			Matcher remote = RESULT.matcher(other.await("RESULT", Duration.ofMinutes(4)));
			long millis = (System.nanoTime() - start) / 1_000_000;
			assertThat(remote.matches()).isTrue();
			long done = load.done.get() + Long.parseLong(remote.group(2));
			long overlaps = load.overlaps.get() + Long.parseLong(remote.group(1));
			long lost = done - counted(ledger);
			Figures figures = new Figures("none: 100,000 acquisitions, 2 JVMs x 8 thr", "lock", overlaps, lost, 0,
					Figures.NOT_APPLICABLE, Figures.NOT_APPLICABLE, Scenario.countKeys(List.of(redis)))
				.report();
			System.out.printf(
					"load: %d acquisitions (2 JVMs x %d threads; half on 1 hot key, half over %d keys) in "
							+ "%d ms, %.0f/s: %d overlaps, %d lost updates%n",
					done, THREADS, SPREAD_KEYS, millis, done * 1000.0 / millis, overlaps, lost);
			assertThat(done).isEqualTo(2L * THREADS * 2 * PER_THREAD);
			assertThat(figures.overlaps()).isZero();
			assertThat(figures.lostUpdates()).isZero();
			assertThat(figures.keysLeft()).isZero();
		}
		finally {
			client.shutdown();
		}
		try (Ledger ledger = new Ledger(fixture.standalone().port())) {
			Load control = new Load(null, ledger);
			control.run(THREADS, 250, 0, 1, Duration.ofMinutes(1));
			Figures figures = new Figures("none: 2,000 critical sections, 8 thr", Protection.NO_LOCK.label(),
					control.overlaps.get(), control.done.get() - counted(ledger), 0, Figures.NOT_APPLICABLE,
					Figures.NOT_APPLICABLE, 0)
				.report();
			assertThat(figures.anomaly()).as("the control shows the anomaly").isTrue();
		}
	}

	private static long counted(Ledger ledger) {
		long counted = ledger.counter(Load.HOT);
		for (int i = 0; i < SPREAD_KEYS; i++) {
			counted += ledger.counter(Load.spreadKey(i));
		}
		return counted;
	}

}
