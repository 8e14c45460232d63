package io.lockstep.shedlock;

import java.time.Duration;
import java.util.Optional;

import io.lockstep.DistributedLocks;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.LockSettings;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * ShedLock's lock provider on a Lockstep {@link LockTemplate}, so that
 * {@code @SchedulerLock(name, lockAtMostFor, lockAtLeastFor)} jobs (and every other user
 * of a ShedLock {@code LockProvider}) lock with Lockstep.
 *
 * <p>
 * A ShedLock lock named {@code name} is the Lockstep lock on the Redis key
 * {@code <key-prefix>shedlock:<name>} (on a template {@code named(n)}:
 * {@code <key-prefix>n:shedlock:<name>}), reported under the lock name {@code name} in
 * metrics, events and the {@code locks} endpoint, with a fencing token
 * ({@link DistributedLocks#currentFencingToken()} in a job that ShedLock's
 * {@code LockingTaskExecutor} runs: on the thread that took the lock). ShedLock's
 * meanings are kept:
 * <ul>
 * <li>{@code lockAtMostFor} is a fixed lease, never renewed: when the job runs longer,
 * the key expires and another instance may take it (Lockstep counts, logs and publishes
 * that as a lost lease, and with {@code lockstep.on-lease-lost=interrupt} interrupts the
 * job's thread; {@code unlock()} then only logs it). Lockstep's limits on a fixed lease
 * apply: from 30 ms to 1 day, and never past {@code lockstep.max-hold-time} when that is
 * set.</li>
 * <li>{@code lockAtLeastFor} is a minimum hold: a job that ends earlier leaves the key to
 * expire {@code lockAtLeastFor} after it was locked (capped by
 * {@code lockstep.max-hold-time}).</li>
 * <li>{@link #lock} never waits: it answers empty when the name is held, also when the
 * current thread holds it (no reentrancy, unlike Lockstep's own locks). ShedLock's
 * {@code LockingTaskExecutor} runs a nested job of a name its thread holds without asking
 * the provider.</li>
 * <li>{@link SimpleLock#extend} (ShedLock's {@code LockExtender} and
 * {@code KeepAliveLockProvider}) gives the lock a new fixed lease of
 * {@code lockAtMostFor} from now, checked against the owner token in Redis and capped by
 * {@code lockstep.max-hold-time}, and a minimum hold of its {@code lockAtLeastFor} from
 * now; it answers empty once the lock is no longer held.</li>
 * </ul>
 * Redis unreachable is a {@link io.lockstep.LockException} from {@link #lock} (the job
 * does not run) and from {@code extend}, within the command timeout, as for every
 * Lockstep lock.
 */
public final class LockstepLockProvider implements ExtensibleLockProvider {

	/**
	 * The name under which ShedLock's locks live: their keys are {@code shedlock:<name>}.
	 */
	static final String NAMESPACE = "shedlock";

	private final LockTemplate locks;

	private final @Nullable Duration maxHoldTime;

	/**
	 * A provider whose locks are {@code lockTemplate}'s, under the name {@code shedlock}.
	 * @param lockTemplate the template (the application's {@code LockTemplate} bean)
	 */
	public LockstepLockProvider(LockTemplate lockTemplate) {
		Assert.notNull(lockTemplate, "'lockTemplate' must not be null");
		this.locks = lockTemplate.named(NAMESPACE).withWaitTime(Duration.ZERO);
		EngineTemplate engine = EngineTemplate.of(lockTemplate);
		this.maxHoldTime = (engine != null) ? engine.engine().maxHoldTime() : null;
	}

	/**
	 * Takes the lock if no one holds it now, without waiting.
	 * @return the lock, or empty when the name is held (by anyone, this thread included)
	 * @throws IllegalArgumentException if {@code lockAtMostFor} is not a lease Lockstep
	 * accepts (30 ms to 1 day)
	 * @throws io.lockstep.LockKeyException if the name is too long for a Redis key
	 * @throws io.lockstep.LockException if Redis cannot be reached
	 */
	@Override
	public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
		Assert.notNull(lockConfiguration, "'lockConfiguration' must not be null");
		String name = lockConfiguration.getName();
		if (heldByThisCall(name)) {
			return Optional.empty();
		}
		return template(lockConfiguration).tryAcquire(name)
			.map((handle) -> new LockstepLock(lockConfiguration, handle, this));
	}

	/**
	 * The template of one lock: reported under the ShedLock name, with a fixed lease of
	 * {@code lockAtMostFor} and a minimum hold of {@code lockAtLeastFor}.
	 */
	private LockTemplate template(LockConfiguration configuration) {
		return this.locks.withLockName(configuration.getName())
			.withLeaseTime(lease(configuration))
			.withMinHoldTime(capped(configuration.getLockAtLeastFor()));
	}

	/**
	 * The fixed lease of a lock or an extension: {@code lockAtMostFor}.
	 * @throws IllegalArgumentException naming the lock if Lockstep does not accept it
	 */
	Duration lease(LockConfiguration configuration) {
		Duration lease = configuration.getLockAtMostFor();
		try {
			return LockSettings.checkLease(lease, "lockAtMostFor");
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("ShedLock lock '" + configuration.getName() + "': lockAtMostFor ("
					+ lease + ") is not a lease Lockstep accepts: " + ex.getMessage(), ex);
		}
	}

	/** A duration capped by {@code lockstep.max-hold-time}, when that is set. */
	Duration capped(Duration duration) {
		return (this.maxHoldTime != null && duration.compareTo(this.maxHoldTime) > 0) ? this.maxHoldTime : duration;
	}

	/**
	 * Whether the current call (this thread) holds the name already: Lockstep would
	 * re-enter it, ShedLock refuses a second lock.
	 */
	private static boolean heldByThisCall(String name) {
		String key = NAMESPACE + ":" + name;
		for (String held : DistributedLocks.currentLockKeys()) {
			if (held.equals(key) || held.endsWith(":" + key)) {
				return true;
			}
		}
		return false;
	}

}
