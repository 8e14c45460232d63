package io.lockstep.internal.redis;

import java.util.List;

import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.LeaseTerms;
import io.lockstep.internal.redis.LockScripts.QueueKeys;
import io.lockstep.internal.redis.LockScripts.Queues;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts' arguments leave out the trailing ones that are the scripts' defaults
 * anyway (Redis pays for each argument of each call): an uncontended pair on a Redis that
 * is not a Cluster sends the owner token alone to the release, and the owner token and
 * the lease alone to an acquire that does not wait (no max hold, no lock delay); whatever
 * differs from a default is sent, with everything before it.
 */
class ScriptArgumentsTests {

	private static final String OWNER = "0123456789abcdef0123456789abcdef";

	private static final Queues QUEUES = new Queues(List.of("q"), List.of("t"), List.of("fence"));

	@Test
	void aReleaseSendsTheOwnerAloneWhenTheNotificationAndThePublishCommandAreTheDefaults() {
		assertThat(LockScripts.release(LockId.of("k"), List.of("k"), OWNER, "PUBLISH", QUEUES, false).args())
			.containsExactly(OWNER);
		assertThat(LockScripts.release(LockId.of("k"), List.of("k"), OWNER, "PUBLISH", null, false).args())
			.containsExactly(OWNER);
		assertThat(LockScripts.release(LockId.of("k"), List.of("k"), OWNER, "SPUBLISH", QUEUES, true).args())
			.containsExactly(OWNER, "released", "SPUBLISH");
	}

	@Test
	void anUndoAndARedlockReleaseSendTheirOwnNotification() {
		assertThat(LockScripts.undo(LockId.of("k"), List.of("k"), OWNER, "PUBLISH").args()).containsExactly(OWNER, "");
		assertThat(LockScripts.undo(LockId.of("k"), List.of("k"), OWNER, "SPUBLISH").args()).containsExactly(OWNER, "",
				"SPUBLISH");
		assertThat(LockScripts.release(LockId.of("k"), List.of("k"), OWNER, "r:42").args()).containsExactly(OWNER,
				"r:42");
	}

	@Test
	void anAcquireThatDoesNotWaitSendsTheOwnerAndTheLeaseAndWhatDiffersFromADefault() {
		assertThat(LockScripts
			.acquire(Acquire.once(LockId.of("k"), OWNER, 30_000, 0), List.of("k"), List.of("fence"), null, true)
			.args()).containsExactly(OWNER, "30000");
		assertThat(LockScripts
			.acquire(Acquire.once(LockId.of("k"), OWNER, 30_000, 60_000), List.of("k"), List.of("fence"), null, true)
			.args()).containsExactly(OWNER, "30000", "", "60000");
		assertThat(LockScripts
			.acquire(new Acquire(LockId.of("k"), OWNER, new LeaseTerms(30_000, 0, 30_000, 500), 0, false), List.of("k"),
					List.of("fence"), null, true)
			.args()).containsExactly(OWNER, "30000", "", "0", "500");
	}

	@Test
	void aWaitingAcquireSendsItsWaitBeforeTheMaxHoldAndALockDelayOnlyWhenThereIsOne() {
		QueueKeys waiter = new QueueKeys("q", "t", "chan");
		List<String> plain = LockScripts
			.acquire(new Acquire(LockId.of("k"), OWNER, new LeaseTerms(30_000, 0, 10_000, 0), 5_000, false),
					List.of("k"), List.of("fence"), waiter, true)
			.args();
		assertThat(plain).containsExactly(OWNER, "30000", "n:5000:10000:chan");
		List<String> delayed = LockScripts
			.acquire(new Acquire(LockId.of("k"), OWNER, new LeaseTerms(30_000, 0, 10_000, 500), 5_000, false),
					List.of("k"), List.of("fence"), waiter, true)
			.args();
		assertThat(delayed).containsExactly(OWNER, "30000", "n:5000:10000:chan", "0", "500");
		List<String> capped = LockScripts
			.acquire(new Acquire(LockId.of("k"), OWNER, new LeaseTerms(30_000, 60_000, 10_000, 0), 5_000, false),
					List.of("k"), List.of("fence"), waiter, true)
			.args();
		assertThat(capped).containsExactly(OWNER, "30000", "n:5000:10000:chan", "60000");
		List<String> cappedAndDelayed = LockScripts
			.acquire(new Acquire(LockId.of("k"), OWNER, new LeaseTerms(30_000, 60_000, 30_000, 500), 0, false),
					List.of("k"), List.of("fence"), null, true)
			.args();
		assertThat(cappedAndDelayed).containsExactly(OWNER, "30000", "", "60000", "500");
	}

	@Test
	void aCallIsNamedInMessagesByWhatItDoesToWhichLock() {
		LockId id = LockId.of("k");
		assertThat(LockScripts.acquire(Acquire.once(id, OWNER, 30_000, 0), List.of("k"), List.of("fence"), null, true)
			.what()).isEqualTo("acquire 'k'");
		assertThat(LockScripts.release(id, List.of("k"), OWNER, "PUBLISH", QUEUES, false).what())
			.isEqualTo("release 'k'");
		assertThat(LockScripts.undo(id, List.of("k"), OWNER, "PUBLISH").what()).isEqualTo("undo 'k'");
		assertThat(LockScripts.keep(id, List.of("k"), OWNER, 500).what())
			.isEqualTo("keep 'k' until its minimum hold passes");
		assertThat(LockScripts.check(LockId.of(List.of("b", "a")), List.of("a", "b"), OWNER).what())
			.isEqualTo("check 'a,b'");
	}

}
