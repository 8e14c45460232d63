package io.lockstep.local;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.engine.LockStore.LeaseTerms;
import io.lockstep.internal.engine.LockStore.Release;
import io.lockstep.internal.engine.LockStore.Renewal;
import io.lockstep.internal.engine.Sharing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The rules of shared keys in the {@link LocalStore} itself, one attempt at a time: the
 * mark of a waiting writer, per-holder leases and fencing tokens, who is told of a
 * release, and refusals that leave nothing behind.
 */
class LocalStoreSharingTests {

	private static final LockId READ = LockId.of("doc", Sharing.READ);

	private static final LockId WRITE = LockId.of("doc");

	private final List<String> notified = new CopyOnWriteArrayList<>();

	private final LocalStore store = new LocalStore(this.notified::add);

	@AfterEach
	void close() {
		this.store.close();
	}

	@Test
	void aWaitingWriterMakesLaterReadersWaitUntilTheKeyIsFree() {
		assertThat(once(READ, "r1").acquired()).isTrue();
		Attempt writer = this.store.acquire(waiting(WRITE, "w"));
		assertThat(writer.acquired()).isFalse();
		assertThat(writer.holderTtlMillis()).isBetween(1L, 10_000L);
		assertThat(once(READ, "r2").acquired()).as("a reader that comes after the waiting writer").isFalse();
		assertThat(this.store.release(Release.of(READ, "r1"))).isOne();
		assertThat(this.notified).containsExactly("doc");
		assertThat(this.store.acquire(waiting(WRITE, "w")).acquired()).isTrue();
		assertThat(once(READ, "r2").acquired()).isFalse();
		assertThat(this.store.release(Release.of(WRITE, "w"))).isOne();
		assertThat(once(READ, "r2").acquired()).as("the key was freed, and the writer's mark with it").isTrue();
		assertThat(once(READ, "r3").acquired()).isTrue();
	}

	/**
	 * A writer that stops asking (it gave up, or its process went) holds later readers up
	 * only until its mark lapses: its last attempt's entry time, as a queue entry in
	 * Redis.
	 */
	@Test
	void aWritersMarkLapsesWhenItStopsAsking() throws InterruptedException {
		assertThat(once(READ, "r1").acquired()).isTrue();
		assertThat(this.store.acquire(new Acquire(WRITE, "w", new LeaseTerms(10_000, 0, 10_000, 0), 100, false))
			.acquired()).isFalse();
		assertThat(once(READ, "r2").acquired()).as("a reader while the writer's mark lasts").isFalse();
		long start = System.nanoTime();
		while (!once(READ, "r2").acquired()) {
			assertThat(System.nanoTime() - start).as("the mark lapsed within 2 s").isLessThan(2_000_000_000L);
			Thread.onSpinWait();
		}
		long lapsedMillis = (System.nanoTime() - start) / 1_000_000;
		System.out.printf("a writer's 100 ms mark lapsed: a reader got in %d ms later, r1 still holding%n",
				lapsedMillis);
		assertThat(lapsedMillis).isLessThan(1_000);
	}

	@Test
	void aWriterThatDoesNotWaitLeavesTheReadersAlone() {
		assertThat(once(READ, "r1").acquired()).isTrue();
		assertThat(once(WRITE, "w").acquired()).isFalse();
		assertThat(once(READ, "r2").acquired()).isTrue();
		assertThat(this.store.check(READ, "r1")).isOne();
		assertThat(this.store.check(READ, "r2")).isOne();
	}

	@Test
	void aReaderLeavingOthersBehindTellsNobodyButAFreedPermitOrKeyIsTold() {
		LockId semaphore = LockId.of("export", Sharing.permits(2));
		once(READ, "r1");
		once(READ, "r2");
		once(semaphore, "s1");
		once(semaphore, "s2");
		assertThat(once(semaphore, "s3").acquired()).isFalse();
		assertThat(this.store.release(Release.of(READ, "r1"))).isOne();
		assertThat(this.notified).as("a writer waits for the last reader").isEmpty();
		assertThat(this.store.release(Release.of(semaphore, "s1"))).isOne();
		assertThat(this.notified).as("a permit is free").containsExactly("export");
		assertThat(once(semaphore, "s3").acquired()).isTrue();
		assertThat(this.store.release(Release.of(READ, "r2"))).isOne();
		assertThat(this.notified).containsExactly("export", "doc");
		assertThat(this.store.release(Release.of(READ, "r2"))).as("released already").isZero();
		assertThat(this.notified).hasSize(2);
	}

	@Test
	void eachHolderHasItsOwnLeaseAndFencingToken() throws InterruptedException {
		Attempt shortLived = this.store.acquire(Acquire.once(READ, "r1", 100, 0));
		Attempt longLived = this.store.acquire(Acquire.once(READ, "r2", 60_000, 0));
		assertThat(longLived.fencingTokens()[0]).isGreaterThan(shortLived.fencingTokens()[0]);
		long[] renewed = this.store.renew(List.of(new Renewal(READ, "r2", 30_000))).join();
		assertThat(renewed).containsExactly(30_000);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (this.store.check(READ, "r1") != 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.store.check(READ, "r1")).as("its own lease ended").isZero();
		assertThat(this.store.check(READ, "r2")).isOne();
		assertThat(this.store.renew(List.of(new Renewal(READ, "r1", 30_000))).join()).containsExactly(0);
		assertThat(this.store.remainingLease("doc")).isBetween(29_000L, 30_000L);
		Attempt writer = once(WRITE, "w");
		assertThat(writer.acquired()).isFalse();
		assertThat(this.store.release(Release.of(READ, "r2"))).isOne();
		assertThat(once(WRITE, "w").fencingTokens()[0]).isGreaterThan(longLived.fencingTokens()[0]);
	}

	@Test
	void aKeyHeldAnotherWayIsRefusedWithNothingDoneNotEvenAWritersMark() {
		once(READ, "r1");
		once(LockId.of("export", Sharing.permits(3)), "s1");
		LockId both = LockId.of(List.of("doc", "export"));
		assertThatExceptionOfType(LockException.class).isThrownBy(() -> this.store.acquire(waiting(both, "w")))
			.withMessageStartingWith("Lock 'doc,export' is held as a semaphore of 3 permits, and this call asked for "
					+ "the write lock (1 permit)");
		assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> once(LockId.of("export", Sharing.permits(2)), "s2"))
			.withMessageStartingWith("Lock 'export' is held as a semaphore of 3 permits, and this call asked for a "
					+ "semaphore of 2 permits");
		assertThatExceptionOfType(LockException.class)
			.isThrownBy(() -> once(LockId.of("doc", Sharing.permits(2)), "s2"))
			.withMessageStartingWith("Lock 'doc' is held as the read lock, and this call asked for a semaphore of 2");
		assertThat(this.store.acquireAsync(waiting(both, "w"), Runnable::run)).isCompletedExceptionally();
		assertThat(once(READ, "r2").acquired()).as("no writer marked 'doc'").isTrue();
		assertThat(this.store.check(both, "w")).isZero();
	}

	private Attempt once(LockId id, String owner) {
		return this.store.acquire(Acquire.once(id, owner, 10_000, 0));
	}

	/** The attempt of a caller that waits when the key is held. */
	private static Acquire waiting(LockId id, String owner) {
		return new Acquire(id, owner, new LeaseTerms(10_000, 0, 10_000, 0), 1_000, false);
	}

}
