package io.lockstep.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lockstep.LockHandle;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redlock.Redlock;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redlock on 5 independent masters that persist their data (lease 1 s): a minority of
 * nodes lost, a majority stopped past the lease, and one node whose clock jumps forward
 * (emulated: the lock key expires early on that node alone) while the holder's quorum was
 * only 3 nodes (its links to the other 2 cut by {@link ChaosProxy}s).
 */
@Tag("fault")
@RedisTest
class RedlockFaultMatrixTests {

	private static final Duration LEASE = Duration.ofSeconds(1);

	@AfterAll
	static void printTable() {
		Figures.printTable();
	}

	@Test
	void losingAMinorityOfNodesCostsNothing(RedisFixture fixture) throws Exception {
		Figures figures = minorityLost(fixture, Protection.LOCK_AND_FENCING);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("lease lost").isNegative();
		assertThat(figures.keysLeft()).isZero();
		assertThat(minorityLost(fixture, Protection.NO_LOCK).anomaly()).as("the control shows the anomaly").isTrue();
	}

	private Figures minorityLost(RedisFixture fixture, Protection protection) throws Exception {
		List<RedisNode> nodes = fixture.masters(5, "--appendonly", "yes");
		try (Ledger ledger = new Ledger(fixture.standalone().port())) {
			Scenario scenario = new Scenario("redlock: 1 of 5 SIGKILL + 1 SIGSTOP 2.5 s", ledger,
					"minority-" + protection.name())
				.lockNodes(nodes);
			try (RedisLockTemplate holder = template(uris(nodes), scenario);
					RedisLockTemplate contender = template(uris(nodes), null)) {
				warmUp(holder, contender);
				return scenario.run(protection, holder, contender, Scenario.Fault.of(() -> {
					nodes.get(0).kill();
					nodes.get(1).pause();
				}, LEASE.multipliedBy(5).dividedBy(2), nodes.get(1)::resume));
			}
		}
	}

	@Test
	void losingAMajorityEndsTheLeaseAndNoOneGetsTheLockUntilItComesBack(RedisFixture fixture) throws Exception {
		Figures figures = majorityStopped(fixture, Protection.LOCK_AND_FENCING);
		assertThat(figures.overlaps()).isZero();
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.detectionMillis()).as("loss signalled while the majority was stopped")
			.isBetween(LEASE.toMillis() / 2, LEASE.multipliedBy(5).dividedBy(2).toMillis() - 1);
		assertThat(figures.recoveryMillis()).as("acquired by another client once the nodes came back")
			.isBetween(LEASE.multipliedBy(5).dividedBy(2).toMillis(),
					LEASE.multipliedBy(5).dividedBy(2).toMillis() + 3_000);
		assertThat(figures.keysLeft()).isZero();
		Figures control = majorityStopped(fixture, Protection.LOCK_ONLY);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	private Figures majorityStopped(RedisFixture fixture, Protection protection) throws Exception {
		List<RedisNode> nodes = fixture.masters(5, "--appendonly", "yes");
		try (Ledger ledger = new Ledger(fixture.standalone().port())) {
			Scenario scenario = new Scenario("redlock: 3 of 5 SIGSTOP 2.5 s (> lease)", ledger,
					"majority-" + protection.name())
				.awaitContender(Duration.ofSeconds(5))
				.lockNodes(nodes);
			try (RedisLockTemplate holder = template(uris(nodes), scenario);
					RedisLockTemplate contender = template(uris(nodes), null)) {
				warmUp(holder, contender);
				return scenario.run(protection, holder, contender, Scenario.Fault.of(() -> {
					for (RedisNode node : nodes.subList(0, 3)) {
						node.pause();
					}
				}, LEASE.multipliedBy(5).dividedBy(2), () -> {
					for (RedisNode node : nodes.subList(0, 3)) {
						node.resume();
					}
				}));
			}
			finally {
				for (RedisNode node : nodes.subList(0, 3)) {
					if (node.isRunning()) {
						node.resume();
					}
				}
			}
		}
	}

	@Test
	void aNodeClockJumpCanGrantTheLockTwiceAndFencingRejectsTheOldHolder(RedisFixture fixture) throws Exception {
		Figures figures = clockJump(fixture, Protection.LOCK_AND_FENCING);
		// not asserted: overlaps (a second quorum formed while the holder held: the
		// hazard)
		assertThat(figures.staleAccepted()).isZero();
		assertThat(figures.keysLeft()).isZero();
		Figures control = clockJump(fixture, Protection.LOCK_ONLY);
		assertThat(control.staleAccepted()).as("the control shows the stale write").isEqualTo(1);
	}

	private Figures clockJump(RedisFixture fixture, Protection protection) throws Exception {
		List<RedisNode> nodes = fixture.masters(5, "--appendonly", "yes");
		String key = "clock-" + protection.name();
		try (Ledger ledger = new Ledger(fixture.standalone().port());
				ChaosProxy toFourth = ChaosProxy.to(nodes.get(3));
				ChaosProxy toFifth = ChaosProxy.to(nodes.get(4))) {
			List<RedisURI> holderView = new ArrayList<>(uris(nodes.subList(0, 3)));
			holderView.add(RedisURI.create(toFourth.host(), toFourth.port()));
			holderView.add(RedisURI.create(toFifth.host(), toFifth.port()));
			Scenario scenario = new Scenario("redlock: clock jump on 1 node of the quorum", ledger, key)
				.awaitContender(Duration.ofSeconds(5))
				.lockNodes(nodes);
			try (RedisLockTemplate holder = template(holderView, scenario);
					RedisLockTemplate contender = template(uris(nodes), null)) {
				warmUp(holder, contender);
				toFourth.blackhole(); // the holder's quorum will be nodes 1-3 only
				toFifth.blackhole();
				// the third node's clock jumps past the lease: the key expires there
				// alone
				return scenario.run(protection, holder, contender, Scenario.Fault
					.of(() -> nodes.get(2).call("PEXPIRE", "lockstep:" + key, "1"), Duration.ZERO, () -> {
					}));
			}
		}
	}

	/** One lock per template, called again for up to 10 s while the nodes connect. */
	private static void warmUp(RedisLockTemplate... templates) {
		for (RedisLockTemplate template : templates) {
			Protection.LOCK_AND_FENCING.acquire(template, "warm-up", Duration.ofSeconds(10)).close();
		}
	}

	private static List<RedisURI> uris(List<RedisNode> nodes) {
		return nodes.stream().map((node) -> RedisURI.create(node.host(), node.port())).toList();
	}

	private static RedisLockTemplate template(List<RedisURI> nodes, Scenario scenario) {
		var builder = Redlock.nodes(nodes)
			.nodeTimeout(Duration.ofMillis(100))
			.builder()
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(300));
		if (scenario != null) {
			builder.lockLostListener(scenario.lossListener());
		}
		return builder.build();
	}

}
