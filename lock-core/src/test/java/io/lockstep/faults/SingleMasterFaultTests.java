package io.lockstep.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.redis.LockWorker;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.WorkerJvm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault matrix on one Redis master (lease 1 s): holders killed and paused, Redis
 * paused shorter and longer than the lease and restarted empty, the network to Redis
 * dropped, reset and slowed by a {@link ChaosProxy}. Every fault runs once protected (the
 * lock, and storage that checks fencing tokens) and once against an unprotected control
 * that must show the anomaly.
 */
@Tag("fault")
@RedisTest
class SingleMasterFaultTests {

	static final Duration LEASE = Duration.ofSeconds(1);

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(250);

	private static final Pattern CLOSED = Pattern.compile("CLOSED lost=(\\w+) lostAt=(\\d+)");

	private RedisFixture fixture;

	private RedisNode redis;

	private Ledger ledger;

	private final java.util.List<RedisClient> clients = new java.util.ArrayList<>();

	@BeforeEach
	void start(RedisFixture fixture) {
		this.fixture = fixture;
		this.redis = fixture.standalone();
		this.ledger = new Ledger(fixture.standalone().port());
	}

	@AfterEach
	void stop() {
		this.ledger.close();
		this.clients.forEach(RedisClient::shutdown);
	}

	@AfterAll
	static void printTable() {
		Figures.printTable();
	}

	@Test
	void aKilledHolderFreesTheLockWithinOneLease() {
		Figures figures;
		try (WorkerJvm holder = new WorkerJvm(LockWorker.class, "hold", Integer.toString(this.redis.port()), "killed",
				Long.toString(LEASE.toMillis())); RedisLockTemplate locks = template(this.redis.port(), null)) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			// kill a holder that is alive and renewing, right after one of its renewals
			long[] ttl = { (Long) this.redis.call("PTTL", "lockstep:killed") };
			List<Long> seen = new ArrayList<>(List.of(ttl[0]));
			assertThat(Eventually.holds(Duration.ofSeconds(5), () -> {
				long previous = ttl[0];
				ttl[0] = (Long) this.redis.call("PTTL", "lockstep:killed");
				if (seen.size() < 50 && ttl[0] != seen.get(seen.size() - 1)) {
					seen.add(ttl[0]);
				}
				return ttl[0] > previous;
			})).as(() -> "the holder renewed its lease (PTTL values seen: " + seen + ")").isTrue();
			holder.kill();
			long killed = System.nanoTime();
			try (LockHandle lock = locks.withWaitTime(Duration.ofSeconds(10)).acquire("killed")) {
				long recovery = (System.nanoTime() - killed) / 1_000_000;
				figures = new Figures("holder JVM SIGKILL", Protection.LOCK_AND_FENCING.label(), 0, 0, 0, -1, recovery,
						0);
			}
			figures = withKeysLeft(figures, Scenario.countKeysAfterALease(List.of(this.redis))).report();
		}
		assertThat(figures.recoveryMillis()).as("the lease ran out")
			.isBetween(LEASE.toMillis() / 3, LEASE.toMillis() + 500);
		assertThat(figures.keysLeft()).isZero();

		// control: a lock without a lease (SET NX, no PX) whose holder died
		this.redis.call("SET", "lockstep:naive", "dead-holder", "NX");
		try (RedisLockTemplate locks = template(this.redis.port(), null)) {
			long start = System.nanoTime();
			long recovery;
			try (LockHandle lock = locks.withWaitTime(LEASE.multipliedBy(3)).acquire("naive")) {
				recovery = (System.nanoTime() - start) / 1_000_000;
			}
			catch (LockAcquisitionException ex) {
				recovery = -1;
			}
			Figures control = new Figures("holder JVM SIGKILL", "control: lock without lease", 0, 0, 0, -1, recovery,
					Scenario.countKeys(List.of(this.redis)))
				.report();
			assertThat(control.anomaly()).as("the control shows the anomaly").isTrue();
			assertThat(control.recoveryMillis()).isNegative();
			assertThat(control.keysLeft()).isPositive();
			assertThat(this.redis.call("EXISTS", "lockstep:naive")).as("the dead holder's key").isEqualTo(1L);
		}
	}

	@Test
	void aHolderPausedPastItsLeaseIsFencedOffByTheStorage() throws Exception {
		Figures figures = pausedHolder(Protection.LOCK_AND_FENCING);
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.overlaps()).as("the holder believed it held the lock after the pause").isZero();
		assertThat(figures.recoveryMillis()).isBetween(0L, LEASE.toMillis() + 1_000);
		assertThat(figures.keysLeft()).isZero();
		Figures control = pausedHolder(Protection.LOCK_ONLY);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	/**
	 * The holder's whole JVM is stopped (SIGSTOP) for 3 leases, as in a stop-the-world GC
	 * pause; meanwhile another client acquires and writes; then the holder resumes and
	 * writes with its old token.
	 */
	private Figures pausedHolder(Protection protection) throws Exception {
		String key = "paused-" + protection.name();
		try (WorkerJvm holder = new WorkerJvm(FaultWorker.class, "pause", Integer.toString(this.redis.port()),
				Integer.toString(ledgerPort()), key, Long.toString(LEASE.toMillis()), protection.fenced() ? "1" : "0");
				RedisLockTemplate locks = template(this.redis.port(), null)) {
			holder.await("ACQUIRED", Duration.ofSeconds(60));
			holder.send("WRITE");
			assertThat(holder.await("WROTE", Duration.ofSeconds(10))).contains("accepted=true");
			holder.pause();
			long start = System.nanoTime();
			long recovery;
			try {
				try (LockHandle lock = locks.withWaitTime(Duration.ofSeconds(10)).acquire(key)) {
					recovery = (System.nanoTime() - start) / 1_000_000;
					assertThat(this.ledger.write(key, lock.fencingToken(), "next holder", protection.fenced()))
						.as("the next holder's write")
						.isTrue();
				}
				Protection.sleep(LEASE.multipliedBy(3).toMillis() - (System.nanoTime() - start) / 1_000_000);
			}
			finally {
				holder.resume();
			}
			long resumed = System.nanoTime();
			holder.send("WRITE");
			String wrote = holder.await("WROTE", Duration.ofSeconds(10));
			holder.send("CLOSE");
			Matcher closed = CLOSED.matcher(holder.await("CLOSED", Duration.ofSeconds(10)));
			assertThat(closed.matches()).isTrue();
			long lostAt = Long.parseLong(closed.group(2));
			System.out.printf(
					"holder JVM SIGSTOPped for %d ms (%s): late write %s; loss signalled %d ms after SIGCONT%n",
					LEASE.multipliedBy(3).toMillis(), protection.label(), wrote,
					(lostAt != 0) ? (lostAt - resumed) / 1_000_000 : -1);
			return new Figures("holder JVM SIGSTOP 3 s (GC pause > lease)", protection.label(),
					wrote.contains("held=true") ? 1 : 0, 0, this.ledger.staleAccepted(key),
					(lostAt != 0) ? (lostAt - start) / 1_000_000 : -1, recovery,
					Scenario.countKeysAfterALease(List.of(this.redis)))
				.report();
		}
	}

	@Test
	void aHolderKeepsItsLockThroughARedisPauseShorterThanTheLease() throws Exception {
		Duration pause = LEASE.multipliedBy(3).dividedBy(10);
		Figures figures = redisPaused(Protection.LOCK_AND_FENCING, pause);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("lease lost").isNegative();
		assertThat(figures.keysLeft()).isZero();
		assertThat(redisPaused(Protection.NO_LOCK, pause).anomaly()).as("the control shows the anomaly").isTrue();
	}

	@Test
	void aRedisPausedPastTheLeaseEndsTheLeaseWhileStoppedAndNoOneElseGetsItBeforeThat() throws Exception {
		Duration pause = LEASE.multipliedBy(5).dividedBy(2);
		Figures figures = redisPaused(Protection.LOCK_AND_FENCING, pause);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("loss signalled while Redis was stopped")
			.isBetween(LEASE.toMillis() / 2, pause.toMillis() - 1);
		assertThat(figures.recoveryMillis()).as("acquired by another client after SIGCONT")
			.isBetween(pause.toMillis(), pause.toMillis() + 2_000);
		assertThat(figures.keysLeft()).isZero();
		Figures control = redisPaused(Protection.LOCK_ONLY, pause);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	private Figures redisPaused(Protection protection, Duration pause) throws Exception {
		Scenario scenario = new Scenario(
				"redis SIGSTOP " + pause.toMillis() + " ms (" + (pause.compareTo(LEASE) < 0 ? "<" : ">") + " lease)",
				this.ledger, "redis-paused-" + pause.toMillis() + "-" + protection.name())
			.awaitContender(pause.compareTo(LEASE) < 0 ? Duration.ofMillis(300) : Duration.ofSeconds(5))
			.lockNodes(List.of(this.redis));
		try (RedisLockTemplate holder = template(this.redis.port(), scenario);
				RedisLockTemplate contender = template(this.redis.port(), null)) {
			contender.tryAcquire("warm-up").ifPresent(LockHandle::close);
			return scenario.run(protection, holder, contender,
					Scenario.Fault.of(this.redis::pause, pause, this.redis::resume));
		}
		finally {
			if (this.redis.isRunning()) {
				this.redis.resume();
			}
		}
	}

	@Test
	void aRedisRestartedWithoutPersistenceLosesTheLockAndFencingStillRejectsTheOldHolder() throws Exception {
		Figures figures = redisRestarted(Protection.LOCK_AND_FENCING);
		// not asserted: overlaps (the restarted Redis grants the lock again at once)
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("loss detected").isBetween(0L, LEASE.toMillis() + 2_000);
		assertThat(figures.recoveryMillis()).as("granted again within the holder's lease")
			.isBetween(0L, LEASE.toMillis() - 1);
		assertThat(figures.keysLeft()).isZero();
		Figures control = redisRestarted(Protection.LOCK_ONLY);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	private Figures redisRestarted(Protection protection) throws Exception {
		Scenario scenario = new Scenario("redis restart, no persistence", this.ledger, "restarted-" + protection.name())
			.awaitContender(Duration.ofSeconds(5))
			.lockNodes(List.of(this.redis));
		try (RedisLockTemplate holder = template(this.redis.port(), scenario);
				RedisLockTemplate contender = template(this.redis.port(), null)) {
			contender.tryAcquire("warm-up").ifPresent(LockHandle::close);
			return scenario.run(protection, holder, contender,
					Scenario.Fault.of(this.redis::restart, Duration.ZERO, () -> {
					}));
		}
	}

	@Test
	void aHolderCutOffFromRedisLosesItsLeaseBeforeAnotherClientCanAcquire() throws Exception {
		Figures figures = networkDropped(Protection.LOCK_AND_FENCING);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).isBetween(LEASE.toMillis() / 2, LEASE.toMillis() + 1_000);
		assertThat(figures.recoveryMillis()).as("another client acquired while the holder was cut off")
			.isBetween(LEASE.toMillis() / 2, LEASE.multipliedBy(5).dividedBy(2).toMillis());
		assertThat(figures.keysLeft()).isZero();
		Figures control = networkDropped(Protection.LOCK_ONLY);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	private Figures networkDropped(Protection protection) throws Exception {
		Scenario scenario = new Scenario("network to redis dropped 2.5 s (proxy)", this.ledger,
				"cut-off-" + protection.name())
			.awaitContender(Duration.ofSeconds(5))
			.lockNodes(List.of(this.redis));
		try (ChaosProxy proxy = ChaosProxy.to(this.redis);
				RedisLockTemplate holder = template(proxy.port(), scenario);
				RedisLockTemplate contender = template(this.redis.port(), null)) {
			holder.tryAcquire("warm-up").ifPresent(LockHandle::close);
			return scenario.run(protection, holder, contender,
					Scenario.Fault.of(proxy::blackhole, LEASE.multipliedBy(5).dividedBy(2), proxy::pass));
		}
	}

	@Test
	void aHolderKeepsItsLockThroughConnectionResetsShorterThanTheLease() throws Exception {
		Figures figures = connectionsReset(Protection.LOCK_AND_FENCING);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("lease lost").isNegative();
		assertThat(figures.keysLeft()).isZero();
		assertThat(connectionsReset(Protection.NO_LOCK).anomaly()).as("the control shows the anomaly").isTrue();
	}

	private Figures connectionsReset(Protection protection) throws Exception {
		Scenario scenario = new Scenario("connections reset (RST) for 300 ms (proxy)", this.ledger,
				"reset-" + protection.name())
			.lockNodes(List.of(this.redis));
		try (ChaosProxy proxy = ChaosProxy.to(this.redis);
				RedisLockTemplate holder = template(proxy.port(), scenario);
				RedisLockTemplate contender = template(this.redis.port(), null)) {
			holder.tryAcquire("warm-up").ifPresent(LockHandle::close);
			return scenario.run(protection, holder, contender,
					Scenario.Fault.of(proxy::reset, LEASE.multipliedBy(3).dividedBy(10), proxy::pass));
		}
	}

	@Test
	void aSlowRedisKeepsTheLockExclusive() throws Exception {
		Figures figures = slowRedis(Protection.LOCK_AND_FENCING);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("lease lost").isNegative();
		assertThat(figures.keysLeft()).isZero();
		assertThat(slowRedis(Protection.NO_LOCK).anomaly()).as("the control shows the anomaly").isTrue();
	}

	private Figures slowRedis(Protection protection) throws Exception {
		Scenario scenario = new Scenario("slow redis: +50 ms each way for 2.5 s (proxy)", this.ledger,
				"slow-" + protection.name())
			.lockNodes(List.of(this.redis));
		try (ChaosProxy proxy = ChaosProxy.to(this.redis);
				RedisLockTemplate holder = template(proxy.port(), scenario);
				RedisLockTemplate contender = template(proxy.port(), null)) {
			holder.tryAcquire("warm-up").ifPresent(LockHandle::close);
			contender.tryAcquire("warm-up").ifPresent(LockHandle::close);
			return scenario.run(protection, holder, contender,
					Scenario.Fault.of(() -> proxy.delay(50), LEASE.multipliedBy(5).dividedBy(2), proxy::pass));
		}
	}

	private int ledgerPort() {
		return this.fixture.nodes().get(1).port();
	}

	private RedisLockTemplate template(int port, Scenario scenario) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		this.clients.add(client);
		// its first connection (event loops started) can take longer on a loaded machine
		// than the 250 ms command timeout, and a lock's call that fails is not retried
		try (var connection = client.connect()) {
			connection.sync().ping();
		}
		var builder = RedisLockTemplate.builder(client).leaseTime(LEASE).commandTimeout(COMMAND_TIMEOUT);
		if (scenario != null) {
			builder.lockLostListener(scenario.lossListener());
		}
		return builder.build();
	}

	private static Figures withKeysLeft(Figures f, long keysLeft) {
		return new Figures(f.fault(), f.run(), f.overlaps(), f.lostUpdates(), f.staleAccepted(), f.detectionMillis(),
				f.recoveryMillis(), keysLeft);
	}

}
