package io.lockstep.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The context of a lock observation: what is being done to which lock.
 */
public class LockObservationContext extends Observation.Context {

	/** Which observation this context belongs to. */
	public enum Kind {

		/** Waiting for and acquiring a lock ({@code lockstep.acquire}). */
		ACQUIRE,

		/** Holding a lock, from acquisition to release ({@code lockstep.held}). */
		HELD

	}

	/** {@code outcome} of an acquisition that got the lock. */
	public static final String ACQUIRED = "acquired";

	/**
	 * {@code outcome} of an acquisition whose wait time ran out while another owner held
	 * the lock, for a caller that gets a {@link io.lockstep.LockAcquisitionException} (or
	 * a fallback): contention.
	 */
	public static final String TIMEOUT = "timeout";

	/**
	 * {@code outcome} of an acquisition that found the lock held by another owner, for a
	 * caller that skips the work then instead of failing ({@code onLocked = SKIP},
	 * {@code tryAcquire}, {@code tryExecute}): work being done elsewhere, not contention.
	 */
	public static final String SKIPPED = "skipped";

	/**
	 * {@code outcome} of an acquisition that its caller gave up before it ended (a
	 * reactive subscription cancelled while waiting).
	 */
	public static final String CANCELLED = "cancelled";

	/** {@code outcome} of an acquisition that failed (Redis unreachable, bad reply). */
	public static final String ERROR = "error";

	private final Kind kind;

	private final String key;

	private final String lockName;

	private @Nullable String outcome;

	private long fencingToken = -1;

	public LockObservationContext(Kind kind, String key, String lockName) {
		this.kind = kind;
		this.key = key;
		this.lockName = lockName;
	}

	public Kind getKind() {
		return this.kind;
	}

	/** The Redis key; high cardinality: never a meter tag. */
	public String getKey() {
		return this.key;
	}

	/**
	 * The lock name: {@code named(...)}, the annotation's name, or
	 * {@code SimpleClassName.method}.
	 */
	public String getLockName() {
		return this.lockName;
	}

	/**
	 * {@link #ACQUIRED}, {@link #TIMEOUT}, {@link #SKIPPED}, {@link #ERROR} or
	 * {@link #CANCELLED} once the acquisition ended; {@code null} before (so meters
	 * started with the observation, such as the {@code lockstep.acquire.active} long-task
	 * timer, carry no outcome at all rather than a made-up one that alerting on
	 * {@code outcome="error"} would count).
	 */
	public @Nullable String getOutcome() {
		return this.outcome;
	}

	public void setOutcome(String outcome) {
		this.outcome = outcome;
	}

	/** The fencing token once acquired, else -1. */
	public long getFencingToken() {
		return this.fencingToken;
	}

	public void setFencingToken(long fencingToken) {
		this.fencingToken = fencingToken;
	}

}
