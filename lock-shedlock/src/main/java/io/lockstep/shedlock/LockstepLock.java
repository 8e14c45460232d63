package io.lockstep.shedlock;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.LockConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock lock held through a Lockstep {@link LockHandle}. ShedLock's
 * {@link AbstractSimpleLock} makes it single-use: after {@code unlock()} or
 * {@code extend(...)}, both throw {@link IllegalStateException}.
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

	@Override
	public String toString() {
		return "LockstepLock[" + this.lockConfiguration.getName() + ", " + this.handle + "]";
	}

}
