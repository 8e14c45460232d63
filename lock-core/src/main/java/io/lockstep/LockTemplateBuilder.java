package io.lockstep;

import java.time.Duration;

import io.lockstep.observation.LockObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The settings every lock template builder takes, whatever the storage
 * ({@code RedisLockTemplate.builder(...)}, {@code Redlock.builder()},
 * {@code LocalLockTemplate.builder()}): code that configures either kind needs only this
 * type.
 *
 * @param <B> the builder type, returned by each setting
 * @param <T> the template it builds
 */
public interface LockTemplateBuilder<B extends LockTemplateBuilder<B, T>, T extends LockTemplate> {

	/** Prefix of every key; default {@code lockstep:}. */
	B keyPrefix(String keyPrefix);

	/** Default wait for a lock; default 5s. */
	B waitTime(Duration waitTime);

	/** Watchdog lease, renewed every third of it while held; default 30s. */
	B leaseTime(Duration leaseTime);

	/**
	 * Hard cap on every hold: a key never outlives acquisition + this (the first lease is
	 * capped too), and {@code isHeld()} turns false by then; default none.
	 */
	B maxHoldTime(@Nullable Duration maxHoldTime);

	/**
	 * Whether a lost lease also interrupts the calls guarded by it (only while they run);
	 * default false (notify only).
	 */
	B interruptOnLeaseLost(boolean interrupt);

	/**
	 * Whether the threads the library starts for work that may block run as virtual
	 * threads: the workers of asynchronous (reactive) acquisitions and the thread that
	 * tells the lock-lost listeners. Default {@code false}; the auto-configuration
	 * follows {@code spring.threads.virtual.enabled}. The watchdog and the timers stay on
	 * platform threads (their tasks never block, and must run on time).
	 * @throws IllegalStateException on a JDK without virtual threads (before 21)
	 */
	B virtualThreads(boolean virtual);

	/**
	 * Adds a listener told about every lost lease, on a thread of the library's own
	 * ({@code lockstep-events}).
	 */
	B lockLostListener(LockLostListener listener);

	/**
	 * Overrides the wait and the lease for the lock name used with {@code named(String)}
	 * (or the annotation's name); {@code null} keeps the default.
	 */
	B lockOverride(String name, @Nullable Duration waitTime, @Nullable Duration leaseTime);

	/**
	 * Overrides the wait, the lease and the minimum hold (see
	 * {@code LockTemplate.withMinHoldTime}) for the lock name used with
	 * {@code named(String)} (or the annotation's name); {@code null} keeps the default.
	 */
	B lockOverride(String name, @Nullable Duration waitTime, @Nullable Duration leaseTime,
			@Nullable Duration minHoldTime);

	/**
	 * How long a key stays unavailable after a lease that ended without a release (the
	 * holder died, froze or lost its connection), counted from the end of the lease in
	 * the storage, so that a frozen holder that wakes up cannot overlap the next one; a
	 * release frees the key at once. The cost: when a holder dies, its key is unavailable
	 * for its lease plus this delay. Default {@link Duration#ZERO}: none.
	 */
	B lockDelay(Duration lockDelay);

	/**
	 * The lock delay for one lock name ({@code named(String)} or the annotation's name).
	 */
	B lockDelay(String name, Duration lockDelay);

	/**
	 * Observes acquisitions ({@code lockstep.acquire}) and held locks
	 * ({@code lockstep.held}); {@code convention} may be {@code null} for the default.
	 */
	B observationRegistry(ObservationRegistry registry, @Nullable LockObservationConvention convention);

	/** Builds the template; it owns what it opened and closes it with itself. */
	T build();

}
