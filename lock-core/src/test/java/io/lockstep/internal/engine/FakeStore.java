package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A storage and its wake-up channel for the engine's pure-logic tests: every renewal is
 * granted as asked, a release frees every key of a waiting lock, a check finds every key
 * held, and the channel is always open. A test's fake says how it answers an attempt and
 * overrides what else its test scripts; the knobs here are shared by several tests.
 */
abstract class FakeStore extends OpenWakeUps implements LockStore {

	/** How many times a caller prepared to listen. */
	final AtomicInteger prepared = new AtomicInteger();

	/** Whether the store hands off (then a first caller asks whether it hears). */
	volatile boolean handsOff;

	/** What {@link #hearsHandOffs} answers (false, the channel's default, unless set). */
	volatile boolean hears;

	/** Thrown once by {@link #hearsHandOffs}, when set. */
	volatile RuntimeException hearsFailure;

	@Override
	public CompletableFuture<long[]> renew(List<Renewal> renewals) {
		return CompletableFuture.completedFuture(renewals.stream().mapToLong(Renewal::leaseMillis).toArray());
	}

	@Override
	public int release(Release request) {
		return request.waits() ? request.id().size() : -1;
	}

	@Override
	public int check(LockId id, String owner) {
		return id.size();
	}

	@Override
	public long remainingLease(String key) {
		return -1;
	}

	@Override
	public Duration commandTimeout() {
		return Duration.ofSeconds(1);
	}

	@Override
	public boolean handsOff() {
		return this.handsOff;
	}

	@Override
	public void prepare() {
		this.prepared.incrementAndGet();
	}

	@Override
	public boolean hearsHandOffs(String key) {
		RuntimeException failure = this.hearsFailure;
		if (failure != null) {
			this.hearsFailure = null;
			throw failure;
		}
		return this.hears;
	}

}
