package io.lockstep.redis;

import java.util.concurrent.atomic.AtomicBoolean;

import io.lockstep.LockHandle;

/**
 * The handle of one (possibly reentrant) acquisition of a {@link Lease}; closing it
 * leaves one level, and the outermost close releases the lock.
 */
final class LeaseHandle implements LockHandle {

	private final LockEngine engine;

	private final Lease lease;

	private final AtomicBoolean closed = new AtomicBoolean();

	LeaseHandle(LockEngine engine, Lease lease) {
		this.engine = engine;
		this.lease = lease;
	}

	Lease lease() {
		return this.lease;
	}

	@Override
	public String key() {
		return this.lease.key();
	}

	@Override
	public long fencingToken() {
		return this.lease.fencingToken();
	}

	@Override
	public boolean isHeld() {
		return !this.closed.get() && this.lease.isHeld();
	}

	@Override
	public void verifyHeld() {
		this.engine.verify(this.lease);
	}

	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.engine.leave(this.lease);
		}
	}

	@Override
	public String toString() {
		return "LockHandle[" + key() + ", fencingToken=" + fencingToken() + ", held=" + isHeld() + "]";
	}

}
