package io.lockstep.shedlock;

import java.util.Optional;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.internal.engine.MinimumHolds;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock lock held through a Lockstep {@link LockHandle}. ShedLock's
 * {@link AbstractSimpleLock} makes it single-use: after {@code unlock()} or
 * {@code extend(...)}, both throw {@link IllegalStateException}; an extension hands the
 * same handle on to the lock it returns.
 */
final class LockstepLock extends AbstractSimpleLock {

	private static final Logger logger = LoggerFactory.getLogger(LockstepLock.class);

	private final LockHandle handle;

	private final LockstepLockProvider provider;

	LockstepLock(LockConfiguration configuration, LockHandle handle, LockstepLockProvider provider) {
		super(configuration);
		this.handle = handle;
		this.provider = provider;
	}

	/**
	 * Releases the key, or, before {@code lockAtLeastFor} has passed, leaves it to expire
	 * then. A lease that ran out while the job ran (it took longer than
	 * {@code lockAtMostFor}) was reported already as a lost lease: it is only logged
	 * here, as ShedLock's providers do, so the job's own outcome stands.
	 */
	@Override
	protected void doUnlock() {
		try {
			this.handle.close();
		}
		catch (LockLostException ex) {
			logger.debug("ShedLock lock '{}' was lost before unlock: {}", this.lockConfiguration.getName(),
					ex.getMessage());
		}
	}

	/**
	 * Gives the lock a new fixed lease of the new {@code lockAtMostFor} from now (checked
	 * against the owner token in Redis, never past {@code lockstep.max-hold-time}) and,
	 * for an unlock before it passes, a minimum hold of the new {@code lockAtLeastFor}
	 * from now.
	 * @return the new lock, or empty when this one is no longer held (its lease ran out,
	 * or another owner holds the key)
	 * @throws io.lockstep.LockException if Redis cannot be reached; this lock then stays
	 * valid
	 */
	@Override
	protected Optional<SimpleLock> doExtend(LockConfiguration newConfiguration) {
		if (!this.handle.extend(this.provider.lease(newConfiguration))) {
			return Optional.empty();
		}
		MinimumHolds.holdFromNow(this.handle, this.provider.capped(newConfiguration.getLockAtLeastFor()));
		return Optional.of(new LockstepLock(newConfiguration, this.handle, this.provider));
	}

	@Override
	public String toString() {
		return "LockstepLock[" + this.lockConfiguration.getName() + ", " + this.handle + "]";
	}

}
