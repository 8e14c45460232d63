package net.javacrumbs.shedlock.support;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;

/**
 * ShedLock's {@link KeepAliveLockProvider} with a shorter shortest {@code lockAtMostFor}
 * than its public constructor's 30 s (through its package-private constructor, as
 * ShedLock's own tests do), so a test sees it extend a lock within a second.
 */
public final class ShortKeepAlive {

	private ShortKeepAlive() {
	}

	public static LockProvider of(ExtensibleLockProvider provider, ScheduledExecutorService executor,
			Duration shortestLockAtMostFor) {
		return new KeepAliveLockProvider(provider, executor, shortestLockAtMostFor);
	}

}
