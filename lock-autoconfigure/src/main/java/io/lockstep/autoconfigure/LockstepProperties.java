package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lockstep.interceptor.DistributedLockAdvisor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of Lockstep ({@code lockstep.*}). They validate themselves
 * when Spring Boot binds them: a value out of range fails start-up in Spring Boot's
 * failure report, naming the property ({@code lockstep.locks.stock.lease-time}), its
 * value and the range.
 */
@ConfigurationProperties("lockstep")
public class LockstepProperties implements Validator {

	/**
	 * Whether to enable Lockstep: the LockTemplate bean and the @DistributedLock advice.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every Redis key Lockstep writes.
	 */
	private String keyPrefix = "lockstep:";

	/**
	 * Default time to wait for a lock held by another owner, for @DistributedLock and
	 * LockTemplate. A Redis failure is not waited for: the call fails at once.
	 */
	private Duration waitTime = Duration.ofSeconds(5);

	/**
	 * Watchdog lease of a lock, renewed every third of it while the lock is held.
	 */
	private Duration leaseTime = Duration.ofSeconds(30);

	/**
	 * Bound on every Redis command of a lock (acquire, renewal, release, health check).
	 * Defaults to spring.data.redis.timeout when that is set (not with Redlock), else 2s,
	 * shortened to a third of the shortest lease; a value set here must not exceed that
	 * third, so that a renewal can time out and be retried before its lease ends.
	 */
	private @Nullable Duration commandTimeout;

	/**
	 * Order of the @DistributedLock advice. The default, Ordered.LOWEST_PRECEDENCE - 100,
	 * runs it outside the @Transactional advice, so locks are held until after commit.
	 */
	private int aspectOrder = DistributedLockAdvisor.DEFAULT_ORDER;

	/**
	 * Hard cap on renewal: no lease is renewed past this time after acquisition. None by
	 * default.
	 */
	private @Nullable Duration maxHoldTime;

	/**
	 * Time for which a lock stays unavailable after a lease that ended without a release
	 * (its holder died, froze or lost its connection), counted from the end of the lease
	 * in Redis, so that a frozen holder that wakes up cannot overlap the next one; a
	 * release frees the lock at once. 0 (the default): none.
	 */
	private Duration lockDelay = Duration.ZERO;

	/**
	 * What to do when the lease of a held lock is lost, in addition to the LockLostEvent,
	 * the log and the LockLostException at release.
	 */
	private OnLeaseLost onLeaseLost = OnLeaseLost.NOTIFY;

	/**
	 * Per-lock-name overrides of wait-time, lease-time, min-hold-time and lock-delay, by
	 * lock name (the name of LockTemplate.named or of @DistributedLock).
	 */
	private final Map<String, Lock> locks = new LinkedHashMap<>();

	private final Redlock redlock = new Redlock();

	private final Replication replication = new Replication();

	private final Web web = new Web();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getWaitTime() {
		return this.waitTime;
	}

	public void setWaitTime(Duration waitTime) {
		this.waitTime = waitTime;
	}

	public Duration getLeaseTime() {
		return this.leaseTime;
	}

	public void setLeaseTime(Duration leaseTime) {
		this.leaseTime = leaseTime;
	}

	public @Nullable Duration getCommandTimeout() {
		return this.commandTimeout;
	}

	public void setCommandTimeout(@Nullable Duration commandTimeout) {
		this.commandTimeout = commandTimeout;
	}

	public int getAspectOrder() {
		return this.aspectOrder;
	}

	public void setAspectOrder(int aspectOrder) {
		this.aspectOrder = aspectOrder;
	}

	public Duration getLockDelay() {
		return this.lockDelay;
	}

	public void setLockDelay(Duration lockDelay) {
		this.lockDelay = lockDelay;
	}

	public @Nullable Duration getMaxHoldTime() {
		return this.maxHoldTime;
	}

	public void setMaxHoldTime(@Nullable Duration maxHoldTime) {
		this.maxHoldTime = maxHoldTime;
	}

	public OnLeaseLost getOnLeaseLost() {
		return this.onLeaseLost;
	}

	public void setOnLeaseLost(OnLeaseLost onLeaseLost) {
		this.onLeaseLost = onLeaseLost;
	}

	public Map<String, Lock> getLocks() {
		return this.locks;
	}

	public Replication getReplication() {
		return this.replication;
	}

	public Redlock getRedlock() {
		return this.redlock;
	}

	public Web getWeb() {
		return this.web;
	}

	@Override
	public boolean supports(Class<?> type) {
		return LockstepProperties.class.isAssignableFrom(type);
	}

	/**
	 * Checks the range of every value; Spring Boot calls it once the properties are
	 * bound.
	 */
	@Override
	public void validate(Object target, Errors errors) {
		PropertyValues.check((LockstepProperties) target, errors);
	}

	/**
	 * What happens when the lease of a held lock is lost.
	 */
	public enum OnLeaseLost {

		/**
		 * Publish a LockLostEvent, count and log it; the guarded call ends with
		 * LockLostException at release.
		 */
		NOTIFY,

		/**
		 * As NOTIFY, and also interrupt the thread running the guarded call.
		 */
		INTERRUPT

	}

	/**
	 * Settings of one lock name.
	 */
	public static class Lock {

		/**
		 * Time to wait for this lock; lockstep.wait-time when not set.
		 */
		private @Nullable Duration waitTime;

		/**
		 * Watchdog lease of this lock; lockstep.lease-time when not set.
		 */
		private @Nullable Duration leaseTime;

		/**
		 * Time after acquisition for which this lock stays taken when released earlier.
		 */
		private @Nullable Duration minHoldTime;

		/**
		 * Lock delay of this lock; lockstep.lock-delay when not set.
		 */
		private @Nullable Duration lockDelay;

		public @Nullable Duration getLockDelay() {
			return this.lockDelay;
		}

		public void setLockDelay(@Nullable Duration lockDelay) {
			this.lockDelay = lockDelay;
		}

		public @Nullable Duration getWaitTime() {
			return this.waitTime;
		}

		public void setWaitTime(@Nullable Duration waitTime) {
			this.waitTime = waitTime;
		}

		public @Nullable Duration getLeaseTime() {
			return this.leaseTime;
		}

		public void setLeaseTime(@Nullable Duration leaseTime) {
			this.leaseTime = leaseTime;
		}

		public @Nullable Duration getMinHoldTime() {
			return this.minHoldTime;
		}

		public void setMinHoldTime(@Nullable Duration minHoldTime) {
			this.minHoldTime = minHoldTime;
		}

	}

	/**
	 * Replica acknowledgement of acquisitions on a master with replicas (standalone with
	 * replicas, or Sentinel).
	 */
	public static class Replication {

		/**
		 * Replicas that must acknowledge every acquisition (WAIT) before the lock counts
		 * as taken; 0 checks nothing. Narrows the window in which a failover loses a
		 * lock.
		 */
		private int acknowledgements;

		/**
		 * How long an acquisition waits for the replica acknowledgements before it is
		 * undone and fails.
		 */
		private Duration timeout = Duration.ofMillis(100);

		public int getAcknowledgements() {
			return this.acknowledgements;
		}

		public void setAcknowledgements(int acknowledgements) {
			this.acknowledgements = acknowledgements;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * Redlock across independent Redis masters.
	 */
	public static class Redlock {

		/**
		 * Redis URIs of independent masters (at least 3, each with appendonly yes);
		 * non-empty turns on Redlock instead of the single Redis of spring.data.redis.
		 */
		private List<String> nodes = new ArrayList<>();

		/**
		 * Clock-drift allowance as a fraction of the lease (plus 2 ms), subtracted from
		 * every lease's validity time.
		 */
		private double clockDriftFactor = 0.01;

		/**
		 * Bound on each node's reply (at most half the command timeout); a node that does
		 * not reply in time loses its vote.
		 */
		private Duration nodeTimeout = Duration.ofMillis(200);

		public List<String> getNodes() {
			return this.nodes;
		}

		public void setNodes(List<String> nodes) {
			this.nodes = nodes;
		}

		public double getClockDriftFactor() {
			return this.clockDriftFactor;
		}

		public void setClockDriftFactor(double clockDriftFactor) {
			this.clockDriftFactor = clockDriftFactor;
		}

		public Duration getNodeTimeout() {
			return this.nodeTimeout;
		}

		public void setNodeTimeout(Duration nodeTimeout) {
			this.nodeTimeout = nodeTimeout;
		}

	}

	/**
	 * Lock exceptions in web applications.
	 */
	public static class Web {

		/**
		 * Whether to answer lock exceptions that reach Spring MVC or WebFlux controllers
		 * as RFC 9457 problem details naming the lock: 409 Conflict when the lock was not
		 * acquired in time, 503 Service Unavailable for other lock failures.
		 */
		private boolean problemDetails = true;

		public boolean isProblemDetails() {
			return this.problemDetails;
		}

		public void setProblemDetails(boolean problemDetails) {
			this.problemDetails = problemDetails;
		}

	}

}
