package io.lockstep.contract;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.LeaseTerms;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.engine.LockStore.Release;
import io.lockstep.internal.engine.LockStore.Renewal;
import io.lockstep.internal.engine.Sharing;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The storage rules the engine relies on, checked on the {@link LockStore} seam itself,
 * one attempt at a time, against every store: acquire and the "held" reply, the owner
 * check, the max-hold cap, renewal, the release modes, the hand-off, readers, permits and
 * the waiting writer's preference (where the store keeps them), and the lock delay. Each
 * subclass starts one store for the class (on real redis-server processes where it is a
 * Redis store); each check uses keys of its own.
 *
 * <p>
 * Every call to the store goes through the protected helpers at the end of this class:
 * they alone build the store's request records.
 *
 * <p>
 * Over 300 lines on purpose: the storage rules are one contract, read in one place (19
 * short checks and the helpers); split by rule, the stores' subclasses would multiply.
 */
@RedisTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class LockStoreContract {

	/** A lease long enough never to end during a check. */
	protected static final long LONG_LEASE = 30_000;

	/**
	 * How long a check waits for a state the store reaches with time (margins for load).
	 */
	protected static final Duration PATIENCE = Duration.ofSeconds(5);

	/** The key prefix of every store under test. */
	protected static final String KEY_PREFIX = "lockstep:";

	private static final AtomicInteger keys = new AtomicInteger();

	private LockStore store;

	/** What a subclass opened for the store, closed after it, last first. */
	protected final List<AutoCloseable> closer = new ArrayList<>();

	/** Starts the store under test; closed after the class. */
	protected abstract LockStore start(RedisFixture fixture) throws Exception;

	/** The store and where it runs, as printed. */
	protected abstract String describe();

	@BeforeAll
	void startStore(RedisFixture fixture) throws Exception {
		this.store = start(fixture);
		// a first connection can take longer than the command timeout on a loaded machine
		String warmUp = key();
		await().atMost(Duration.ofSeconds(30))
			.ignoreExceptions()
			.until(() -> tryOnce(LockId.of(warmUp), "warm-up", LONG_LEASE).acquired());
		release(LockId.of(warmUp), "warm-up");
		System.out.printf("store contract on %s (hands off: %s, shares: %s)%n", describe(), this.store.handsOff(),
				this.store.shares());
	}

	@AfterAll
	void closeStore() throws Exception {
		if (this.store != null) {
			this.store.close();
		}
		for (int i = this.closer.size() - 1; i >= 0; i--) {
			this.closer.get(i).close();
		}
	}

	@Test
	void anAttemptOnAFreeLockAcquiresItAndOneOnAHeldLockSaysWhoLongAndWhere() {
		LockId lock = exclusive();
		Attempt first = tryOnce(lock, "a", LONG_LEASE);
		assertThat(first.acquired()).isTrue();
		assertThat(first.fencingTokens()).hasSize(1);
		assertThat(first.fencingTokens()[0]).isPositive();
		assertThat(check(lock, "a")).isOne();
		assertThat(remainingLease(lock.first())).isBetween(LONG_LEASE - 5_000, LONG_LEASE);
		Attempt held = tryOnce(lock, "b", LONG_LEASE);
		assertThat(held.acquired()).isFalse();
		assertThat(held.holderTtlMillis()).as("the holder's remaining lease").isBetween(LONG_LEASE - 5_000, LONG_LEASE);
		assertThat(held.blockingIndex()).isZero();
		assertThat(check(lock, "b")).isZero();
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).as("the holder asks again").isTrue();
	}

	@Test
	void aMultiKeyAttemptIsAllOrNothingAndNamesTheHeldKey() {
		String free = key();
		String taken = key();

		assertThat(tryOnce(LockId.of(taken), "a", LONG_LEASE).acquired()).isTrue();
		LockId both = LockId.of(List.of(free, taken));
		Attempt attempt = tryOnce(both, "b", LONG_LEASE);
		assertThat(attempt.acquired()).isFalse();
		assertThat(both.keys().get(attempt.blockingIndex())).as("the held key (a lock's keys are sorted)")
			.isEqualTo(taken);
		assertThat(check(both, "b")).isZero();
		assertThat(remainingLease(free)).as("the free key was not taken").isNegative();
		assertThat(release(LockId.of(taken), "a")).isOne();
		Attempt acquired = tryOnce(both, "b", LONG_LEASE);
		assertThat(acquired.acquired()).isTrue();
		assertThat(acquired.fencingTokens()).hasSize(2);
		assertThat(check(both, "b")).isEqualTo(2);
	}

	@Test
	void fencingTokensGrowWithEachGrantOfAKey() {
		LockId lock = exclusive();
		long previous = 0;
		for (int i = 0; i < 5; i++) {
			Attempt attempt = tryOnce(lock, "owner" + i, LONG_LEASE);
			assertThat(attempt.acquired()).isTrue();
			assertThat(attempt.fencingTokens()[0]).isGreaterThan(previous);
			previous = attempt.fencingTokens()[0];
			assertThat(release(lock, "owner" + i)).isOne();
		}
	}

	@Test
	void noOtherOwnerReleasesKeepsUndoesOrRenewsAHeldLock() throws Exception {
		LockId lock = exclusive();
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).isTrue();
		assertThat(release(lock, "b")).isZero();
		assertThat(keep(lock, "b", 100)).isZero();
		assertThat(undo(lock, "b")).isZero();
		assertThat(renew(lock, "b", 100)).isZero();
		assertThat(check(lock, "a")).isOne();
		assertThat(remainingLease(lock.first())).as("nobody shortened the lease").isGreaterThan(1_000);
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).isFalse();
	}

	@Test
	void aLeaseEndsOnItsOwnAndARenewalExtendsIt() {
		LockId lock = exclusive();
		assertThat(tryOnce(lock, "a", 300).acquired()).isTrue();
		assertThat(renew(lock, "a", LONG_LEASE)).isEqualTo(LONG_LEASE);
		assertThat(remainingLease(lock.first())).isGreaterThan(LONG_LEASE - 5_000);
		LockId short_ = exclusive();
		assertThat(tryOnce(short_, "a", 200).acquired()).isTrue();
		await().atMost(PATIENCE).until(() -> check(short_, "a") == 0);
		assertThat(renew(short_, "a", LONG_LEASE)).as("a lease that ended is not resurrected").isZero();
		assertThat(tryOnce(short_, "b", LONG_LEASE).acquired()).isTrue();
	}

	@Test
	void renewalsOfSeveralLeasesAnswerEachInOrder() {
		LockId held = exclusive();
		LockId gone = exclusive();
		LockId other = exclusive();
		assertThat(tryOnce(held, "a", 1_000).acquired()).isTrue();
		assertThat(tryOnce(other, "b", 1_000).acquired()).isTrue();
		long[] granted = renewAll(List.of(held, gone, other), List.of("a", "a", "a"), 20_000);
		assertThat(granted).containsExactly(20_000, 0, 0);
		assertThat(remainingLease(other.first())).as("another owner's lease is left as it was").isLessThan(1_001);
	}

	@Test
	void noRenewalExtendsALeasePastItsMaxHold() {
		LockId lock = exclusive();
		long start = System.nanoTime();
		assertThat(tryCapped(lock, "a", LONG_LEASE, 800).acquired()).isTrue();
		long granted = renew(lock, "a", LONG_LEASE);
		assertThat(granted).as("the renewal is cut at the cap").isBetween(1L, 800L);
		assertThat(remainingLease(lock.first())).isBetween(1L, 800L);
		await().atMost(PATIENCE).until(() -> check(lock, "a") == 0);
		long heldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf("%s: a lease of %d ms capped at 800 ms ended after %d ms%n", describe(), LONG_LEASE,
				heldMillis);
		assertThat(heldMillis).isLessThan(PATIENCE.toMillis());
		assertThat(renew(lock, "a", LONG_LEASE)).isLessThanOrEqualTo(0);
	}

	@Test
	void aReleaseFreesEveryKeyOfTheOwnerAndCountsThem() {
		LockId lock = LockId.of(List.of(key(), key()));
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).isTrue();
		assertThat(release(lock, "a")).isEqualTo(2);
		assertThat(check(lock, "a")).isZero();
		assertThat(release(lock, "a")).as("released already").isZero();
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).as("free at once").isTrue();
	}

	@Test
	void aKeptLockStaysTakenForTheKeepTimeOnlyAndNoRenewalExtendsIt() {
		LockId lock = exclusive();
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).isTrue();
		assertThat(keep(lock, "a", 600)).isOne();
		assertThat(remainingLease(lock.first())).isBetween(1L, 600L);
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).as("still taken").isFalse();
		assertThat(renew(lock, "a", LONG_LEASE)).as("the keep lowered the cap").isLessThanOrEqualTo(600);
		assertThat(remainingLease(lock.first())).isLessThanOrEqualTo(600);
		await().atMost(PATIENCE).until(() -> tryOnce(lock, "b", LONG_LEASE).acquired());
	}

	@Test
	void anUndoFreesTheKeysTheAttemptTook() throws Exception {
		LockId lock = LockId.of(List.of(key(), key()));
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).isTrue();
		assertThat(undo(lock, "a")).isEqualTo(2);
		assertThat(check(lock, "a")).isZero();
		assertThat(undo(lock, "a")).as("nothing left to undo").isZero();
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).isTrue();
	}

	@Test
	void aWaiterThatLeavesIsNotGivenTheLock() throws Exception {
		LockId lock = exclusive();
		assertThat(tryOnce(lock, "a", LONG_LEASE).acquired()).isTrue();
		assertThat(tryWaiting(lock, "w", LONG_LEASE, false).acquired()).isFalse();
		assertThat(leave(lock, "w")).isZero();
		assertThat(release(lock, "a")).isOne();
		assertThat(check(lock, "w")).isZero();
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).as("free for whoever asks").isTrue();
	}

	@Test
	void aReleaseHandsAOneKeyLockToItsFirstWaiter() throws Exception {
		assumeTrue(handsOff(), () -> describe() + " frees a released lock for whoever asks first");
		LockId lock = exclusive();
		Attempt first = tryOnce(lock, "a", LONG_LEASE);
		assertThat(tryWaiting(lock, "w1", LONG_LEASE, false).acquired()).isFalse();
		assertThat(tryWaiting(lock, "w2", LONG_LEASE, false).acquired()).isFalse();
		assertThat(release(lock, "a")).isOne();
		assertThat(check(lock, "w1")).as("handed to the first waiter").isOne();
		assertThat(tryOnce(lock, "b", LONG_LEASE).acquired()).as("not free for a newcomer").isFalse();
		assertThat(tryWaiting(lock, "w2", LONG_LEASE, true).acquired()).as("the second still waits").isFalse();
		Attempt handed = tryWaiting(lock, "w1", LONG_LEASE, true);
		assertThat(handed.acquired()).isTrue();
		assertThat(handed.fencingTokens()[0]).isGreaterThan(first.fencingTokens()[0]);
		assertThat(leave(lock, "w1")).as("a waiter that leaves after the hand-off releases it").isOne();
		assertThat(check(lock, "w2")).as("and the next waiter is handed it").isOne();
	}

	@Test
	void readersShareAKeyEachWithItsOwnLeaseAndFencingToken() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		LockId read = LockId.of(key(), Sharing.READ);
		LockId write = LockId.of(read.first());
		Attempt shortLived = tryOnce(read, "r1", 300);
		Attempt longLived = tryOnce(read, "r2", LONG_LEASE);
		assertThat(shortLived.acquired()).isTrue();
		assertThat(longLived.acquired()).isTrue();
		assertThat(longLived.fencingTokens()[0]).isGreaterThan(shortLived.fencingTokens()[0]);
		assertThat(tryOnce(write, "w", LONG_LEASE).acquired()).isFalse();
		await().atMost(PATIENCE).until(() -> check(read, "r1") == 0);
		assertThat(check(read, "r2")).as("the second reader's own lease goes on").isOne();
		assertThat(renew(read, "r1", LONG_LEASE)).as("an ended share is not resurrected").isZero();
		assertThat(renew(read, "r2", 20_000)).isEqualTo(20_000);
		assertThat(release(read, "r2")).isOne();
		Attempt writer = tryOnce(write, "w", LONG_LEASE);
		assertThat(writer.acquired()).isTrue();
		assertThat(writer.fencingTokens()[0]).isGreaterThan(longLived.fencingTokens()[0]);
	}

	@Test
	void aSemaphoreAdmitsAsManyHoldersAsPermitsAndAReleaseFreesOne() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		LockId semaphore = LockId.of(key(), Sharing.permits(2));
		assertThat(tryOnce(semaphore, "s1", LONG_LEASE).acquired()).isTrue();
		assertThat(tryOnce(semaphore, "s2", LONG_LEASE).acquired()).isTrue();
		assertThat(tryOnce(semaphore, "s3", LONG_LEASE).acquired()).isFalse();
		assertThat(release(semaphore, "s1")).isOne();
		assertThat(tryOnce(semaphore, "s3", LONG_LEASE).acquired()).isTrue();
		assertThat(check(semaphore, "s2")).isOne();
	}

	@Test
	void aWaitingWriterMakesLaterReadersWaitAndGetsTheKeyWhenTheLastReaderLeaves() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		LockId read = LockId.of(key(), Sharing.READ);
		LockId write = LockId.of(read.first());
		assertThat(tryOnce(read, "r1", LONG_LEASE).acquired()).isTrue();
		assertThat(tryOnce(read, "r2", LONG_LEASE).acquired()).isTrue();
		Attempt writer = tryWaiting(write, "w", LONG_LEASE, false);
		assertThat(writer.acquired()).isFalse();
		assertThat(writer.holderTtlMillis()).isPositive();
		assertThat(tryOnce(read, "r3", LONG_LEASE).acquired()).as("a reader after the waiting writer").isFalse();
		assertThat(release(read, "r1")).isOne();
		assertThat(tryWaiting(write, "w", LONG_LEASE, true).acquired()).as("a reader is left").isFalse();
		assertThat(release(read, "r2")).isOne();
		assertThat(tryWaiting(write, "w", LONG_LEASE, true).acquired()).as("the last reader left").isTrue();
		assertThat(tryOnce(read, "r3", LONG_LEASE).acquired()).isFalse();
		assertThat(release(write, "w")).isOne();
		assertThat(tryOnce(read, "r3", LONG_LEASE).acquired()).as("the writer's mark went with it").isTrue();
	}

	@Test
	void aWriterThatDoesNotWaitLeavesTheReadersAlone() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		LockId read = LockId.of(key(), Sharing.READ);
		assertThat(tryOnce(read, "r1", LONG_LEASE).acquired()).isTrue();
		assertThat(tryOnce(LockId.of(read.first()), "w", LONG_LEASE).acquired()).isFalse();
		assertThat(tryOnce(read, "r2", LONG_LEASE).acquired()).isTrue();
		assertThat(check(read, "r1")).isOne();
		assertThat(check(read, "r2")).isOne();
	}

	/**
	 * A writer that stops asking (it gave up, or its process went) holds later readers up
	 * only until its mark lapses: its last attempt's entry time.
	 */
	@Test
	void aWaitingWritersMarkLapsesWhenItStopsAsking() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		LockId read = LockId.of(key(), Sharing.READ);
		assertThat(tryOnce(read, "r1", LONG_LEASE).acquired()).isTrue();
		assertThat(tryMarking(LockId.of(read.first()), "w", 300).acquired()).isFalse();
		assertThat(tryOnce(read, "r2", LONG_LEASE).acquired()).as("a reader while the writer's mark lasts").isFalse();
		long start = System.nanoTime();
		await().atMost(PATIENCE).until(() -> tryOnce(read, "r2", LONG_LEASE).acquired());
		System.out.printf("%s: a writer's 300 ms mark lapsed; a reader got in %d ms later%n", describe(),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		assertThat(check(read, "r1")).isOne();
	}

	@Test
	void aKeyHeldAnotherWayIsRefusedWithNothingTaken() {
		assumeTrue(shares(), () -> describe() + " keeps exclusive locks only");
		String doc = key();
		String export = key();
		assertThat(tryOnce(LockId.of(doc, Sharing.READ), "r1", LONG_LEASE).acquired()).isTrue();
		assertThat(tryOnce(LockId.of(export, Sharing.permits(3)), "s1", LONG_LEASE).acquired()).isTrue();
		assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> tryOnce(LockId.of(export, Sharing.permits(2)), "s2", LONG_LEASE))
			.withMessageContaining("semaphore of 3 permits");
		assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> tryOnce(LockId.of(doc, Sharing.permits(2)), "s2", LONG_LEASE))
			.withMessageContaining("read lock");
		assertThat(tryOnce(LockId.of(doc, Sharing.READ), "r2", LONG_LEASE).acquired()).as("nothing was taken").isTrue();
	}

	@Test
	void aLeaseThatEndsWithoutAReleaseLeavesTheKeyUnavailableForTheLockDelay() {
		LockId lock = exclusive();
		assertThat(tryDelayed(lock, "a", 300, 1_500).acquired()).isTrue();
		await().atMost(PATIENCE).until(() -> check(lock, "a") == 0);
		long ended = System.nanoTime();
		Attempt during = tryOnce(lock, "b", LONG_LEASE);
		assertThat(during.acquired()).as("within the lock delay").isFalse();
		assertThat(during.holderTtlMillis()).isBetween(1L, 1_500L);
		await().atMost(PATIENCE).until(() -> tryOnce(lock, "b", LONG_LEASE).acquired());
		long unavailable = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended);
		System.out.printf("%s: after a 300 ms lease that ended, a 1500 ms lock delay kept the key %d ms%n", describe(),
				unavailable);
		// the lease ended at most a poll before it was seen; the delay counts from then
		assertThat(unavailable).isGreaterThan(1_000);
		LockId released = exclusive();
		assertThat(tryDelayed(released, "c", LONG_LEASE, 1_500).acquired()).isTrue();
		assertThat(release(released, "c")).isOne();
		assertThat(tryOnce(released, "d", LONG_LEASE).acquired()).as("a release frees it at once").isTrue();
	}

	// --- the only calls of the store, and the only places that build its requests ---

	/**
	 * A key no other check uses, with the key prefix the subclasses give their store (the
	 * engine hands the store prefixed keys).
	 */
	protected static String key() {
		return KEY_PREFIX + "contract-" + keys.incrementAndGet();
	}

	/** An exclusive lock of a key no other check uses. */
	protected static LockId exclusive() {
		return LockId.of(key());
	}

	protected boolean handsOff() {
		return this.store.handsOff();
	}

	protected boolean shares() {
		return this.store.shares();
	}

	/** One attempt of a caller that does not wait, without a cap or a lock delay. */
	protected Attempt tryOnce(LockId id, String owner, long leaseMillis) {
		return this.store.acquire(Acquire.once(id, token(owner), leaseMillis, 0));
	}

	/** One attempt of a caller that does not wait, with a max-hold cap. */
	protected Attempt tryCapped(LockId id, String owner, long leaseMillis, long maxHoldMillis) {
		return this.store.acquire(Acquire.once(id, token(owner), leaseMillis, maxHoldMillis));
	}

	/** One attempt of a caller that waits (its entry lives 10 s unless it asks again). */
	protected Attempt tryWaiting(LockId id, String owner, long leaseMillis, boolean queued) {
		return this.store
			.acquire(new Acquire(id, token(owner), new LeaseTerms(leaseMillis, 0, leaseMillis, 0), 10_000, queued));
	}

	/** One attempt of a caller that waits and whose entry lives {@code entryMillis}. */
	protected Attempt tryMarking(LockId id, String owner, long entryMillis) {
		return this.store
			.acquire(new Acquire(id, token(owner), new LeaseTerms(LONG_LEASE, 0, LONG_LEASE, 0), entryMillis, false));
	}

	/** One attempt of a caller that does not wait, with a lock delay. */
	protected Attempt tryDelayed(LockId id, String owner, long leaseMillis, long delayMillis) {
		return this.store
			.acquire(new Acquire(id, token(owner), new LeaseTerms(leaseMillis, 0, leaseMillis, delayMillis), 0, false));
	}

	/** Renews one lease: the lease granted, 0 when gone or another's, -1 at the cap. */
	protected long renew(LockId id, String owner, long leaseMillis) {
		return renewAll(List.of(id), List.of(owner), leaseMillis)[0];
	}

	/** Renews several leases in one call. */
	protected long[] renewAll(List<LockId> ids, List<String> owners, long leaseMillis) {
		List<Renewal> renewals = new ArrayList<>();
		for (int i = 0; i < ids.size(); i++) {
			renewals.add(new Renewal(ids.get(i), token(owners.get(i)), leaseMillis));
		}
		return this.store.renew(renewals).orTimeout(PATIENCE.toMillis(), TimeUnit.MILLISECONDS).join();
	}

	/** Releases (mode RELEASE): the number of keys that held the owner's token. */
	protected int release(LockId id, String owner) {
		return this.store.release(Release.of(id, token(owner)));
	}

	/** Keeps the keys for {@code keepMillis} from now (mode KEEP). */
	protected int keep(LockId id, String owner, long keepMillis) {
		return this.store.release(Release.keep(id, token(owner), keepMillis));
	}

	/** Undoes an attempt (mode UNDO), sent and answered. */
	protected int undo(LockId id, String owner) throws Exception {
		return this.store.send(Release.undo(id, token(owner))).get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** A waiter leaves (mode LEAVE), sent and answered. */
	protected int leave(LockId id, String owner) throws Exception {
		return this.store.send(Release.leave(id, token(owner))).get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
	}

	protected int check(LockId id, String owner) {
		return this.store.check(id, token(owner));
	}

	protected long remainingLease(String key) {
		return this.store.remainingLease(key);
	}

	/** An owner token (32 hex digits, as the engine makes them) for a short name. */
	protected static String token(String owner) {
		return String.format("%032x", new BigInteger(1, owner.getBytes(StandardCharsets.UTF_8)));
	}

}
