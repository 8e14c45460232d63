package io.lockstep.local;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lockstep.LockException;
import io.lockstep.internal.engine.LockId;
import io.lockstep.internal.engine.LockStore.Acquire;
import io.lockstep.internal.engine.LockStore.LeaseTerms;
import io.lockstep.internal.engine.LockStore.Attempt;
import io.lockstep.internal.engine.LockStore.Release;
import io.lockstep.internal.engine.Sharing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What only the {@link LocalStore} does with shared keys, beside the rules every store
 * keeps ({@link io.lockstep.contract.LockStoreContract}, run on it by
 * {@link LocalStoreContractTests}): who its listener is told of a release, and refusals
 * that name the lock and leave nothing behind, not even a waiting writer's mark on the
 * keys checked before the refused one.
 */
class LocalStoreSharingTests {

	private static final LockId READ = LockId.of("doc", Sharing.READ);

	private final List<String> notified = new CopyOnWriteArrayList<>();

	private final LocalStore store = new LocalStore(this.notified::add);

	@AfterEach
	void close() {
		this.store.close();
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
