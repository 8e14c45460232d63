package io.lockstep.redis;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockInfo;
import io.lockstep.LockLostException;
import io.lockstep.LockLostListener;
import io.lockstep.internal.CallContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acquires and releases leases: the acquire loop (atomic script, then park until a
 * release notification or the holder's lease runs out), reentrancy through the
 * {@link CallContext}, and the handling of lost leases. One engine per client; templates
 * share it.
 */
final class LockEngine implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LockEngine.class);

	private static final SecureRandom random = new SecureRandom();

	private static final HexFormat hex = HexFormat.of();

	private final LockCommands commands;

	private final ReleaseWaiters waiters;

	private final Watchdog watchdog;

	private final ScheduledExecutorService scheduler;

	private final String fenceKey;

	private final LeaseLossNotifier losses;

	private final LockObservations observations;

	LockEngine(AbstractRedisClient client, Duration commandTimeout, String keyPrefix, Duration maxHoldTime,
			List<LockLostListener> listeners, boolean interruptOnLoss, LockObservations observations) {
		this.commands = new LockCommands(client, commandTimeout);
		this.waiters = new ReleaseWaiters(client, commandTimeout);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (task) -> {
			Thread thread = new Thread(task, "lockstep-watchdog");
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		this.scheduler = executor;
		this.watchdog = new Watchdog(this.commands, this.scheduler, maxHoldTime, this::lost,
				(lease) -> observations.stopHeld(lease.observation()));
		this.fenceKey = keyPrefix + "__fence";
		this.losses = new LeaseLossNotifier(listeners, interruptOnLoss, observations);
		this.observations = observations;
	}

	/**
	 * Acquires all keys (sorted, distinct Redis keys) for one owner, waiting up to
	 * {@code waitNanos}.
	 * @param leaseNanos the lease; renewed by the watchdog when {@code renewed}
	 * @return the handle, or {@code null} when not acquired and {@code waitNanos} is 0
	 */
	LockHandle acquire(List<String> keys, String lockName, long waitNanos, long leaseNanos, boolean renewed,
			boolean throwOnTimeout) {
		LockHandle reentered = reenter(keys);
		if (reentered != null) {
			return reentered;
		}
		String owner = hex.formatHex(nextToken());
		Object observation = this.observations.startAcquire(String.join(",", keys), lockName);
		String outcome = LockObservations.ERROR;
		long fencingToken = -1;
		Throwable failure = null;
		long start = System.nanoTime();
		ReleaseWaiters.Waiter waiter = null;
		try {
			while (true) {
				long sent = System.nanoTime();
				List<Long> reply = attempt(keys, owner, leaseNanos);
				if (reply.get(0) == 1L) {
					LeaseHandle handle = granted(keys, reply, owner, lockName, leaseNanos, renewed, sent);
					outcome = LockObservations.ACQUIRED;
					fencingToken = handle.fencingToken();
					return handle;
				}
				long waited = System.nanoTime() - start;
				if (waited >= waitNanos) {
					outcome = LockObservations.TIMEOUT;
					if (!throwOnTimeout) {
						return null;
					}
					throw new LockAcquisitionException(String.join(",", keys), Duration.ofNanos(waited));
				}
				String blocking = keys.get((reply.size() > 2) ? reply.get(2).intValue() : 0);
				if (waiter == null || !waiter.key().equals(blocking)) {
					if (waiter != null) {
						this.waiters.unregister(waiter);
					}
					waiter = this.waiters.register(blocking);
					continue;
				}
				waiter.await(waitNanos - waited, reply.get(1));
				if (Thread.currentThread().isInterrupted()) {
					throw new LockException("Interrupted while waiting for lock '" + String.join(",", keys) + "'");
				}
			}
		}
		catch (RuntimeException ex) {
			failure = LockObservations.TIMEOUT.equals(outcome) ? null : ex;
			throw ex;
		}
		finally {
			if (waiter != null) {
				this.waiters.unregister(waiter);
			}
			this.observations.stopAcquire(observation, outcome, fencingToken, failure);
		}
	}

	private LockHandle reenter(List<String> keys) {
		CallContext.Entry entry = CallContext.find(String.join(",", keys), this);
		if (entry instanceof Lease lease && lease.isActive()) {
			lease.enter();
			return new LeaseHandle(this, lease);
		}
		return null;
	}

	private List<Long> attempt(List<String> keys, String owner, long leaseNanos) {
		String leaseMillis = Long.toString(TimeUnit.NANOSECONDS.toMillis(leaseNanos));
		List<String> scriptKeys = new ArrayList<>(keys);
		List<String> args = List.of(owner, leaseMillis);
		try {
			if (keys.size() == 1) {
				scriptKeys.add(this.fenceKey);
				return this.commands.eval(LockCommands.ACQUIRE, scriptKeys, args, "acquire '" + keys.get(0) + "'");
			}
			keys.forEach((key) -> scriptKeys.add(this.fenceKey));
			return this.commands.eval(LockCommands.ACQUIRE_ALL, scriptKeys, args, "acquire " + keys);
		}
		catch (LockException ex) {
			// the command may still run later (a reply lost, a reconnect replaying it):
			// undo it then
			this.commands.evalAsync(LockCommands.RELEASE, keys, List.of(owner));
			throw ex;
		}
	}

	private LeaseHandle granted(List<String> keys, List<Long> reply, String owner, String lockName, long leaseNanos,
			boolean renewed, long sent) {
		long[] fences = new long[keys.size()];
		for (int i = 0; i < fences.length; i++) {
			fences[i] = reply.get(i + 1);
		}
		Lease lease = new Lease(this, keys, fences, owner, lockName, leaseNanos, renewed, sent, this::verify);
		lease.observation(this.observations.startHeld(lease.key(), lockName, lease.fencingToken()));
		this.watchdog.watch(lease);
		CallContext.push(lease);
		return new LeaseHandle(this, lease);
	}

	/** Leaves one level of the lease; the outermost level releases it. */
	void leave(Lease lease) {
		if (!lease.leave()) {
			return;
		}
		CallContext.remove(lease);
		this.watchdog.unwatch(lease);
		if (lease.state() == Lease.State.HELD && System.nanoTime() - lease.deadlineNanos() >= 0) {
			lost(lease, lease.renewed() ? "the lease ran out by the local clock before release"
					: "its fixed lease of " + Duration.ofNanos(lease.leaseNanos()) + " ran out before release");
		}
		long deleted;
		try {
			deleted = this.commands.eval(LockCommands.RELEASE, lease.keys(), List.of(lease.ownerToken()),
					"release '" + lease.key() + "'");
		}
		catch (LockException ex) {
			if (lease.markReleased()) {
				logger.warn("Could not release lock '{}'; its lease expires on its own", lease.key(), ex);
			}
			this.observations.stopHeld(lease.observation());
			throw ex;
		}
		if (deleted > 0) {
			lease.keys().forEach(this.waiters::released);
		}
		if (lease.state() == Lease.State.HELD && deleted < lease.keys().size()) {
			lost(lease, "at release the key was gone or held by another owner");
		}
		lease.markReleased();
		this.observations.stopHeld(lease.observation());
		if (lease.state() == Lease.State.LOST) {
			throw new LockLostException(lease.key(), lease.lostReason());
		}
	}

	/**
	 * Confirms in Redis that the lease is still held; marks it lost and throws if not.
	 */
	void verify(Lease lease) {
		if (lease.state() == Lease.State.HELD) {
			long held = this.commands.eval(LockCommands.CHECK, lease.keys(), List.of(lease.ownerToken()),
					"check '" + lease.key() + "'");
			if (held < lease.keys().size()) {
				lost(lease, "the key was gone or held by another owner when checked");
			}
			else if (System.nanoTime() - lease.deadlineNanos() >= 0) {
				lost(lease, "the lease ran out by the local clock");
			}
		}
		if (lease.state() != Lease.State.HELD) {
			throw new LockLostException(lease.key(),
					(lease.lostReason() != null) ? lease.lostReason() : "it is no longer held (" + lease.state() + ")");
		}
	}

	void lost(Lease lease, String reason) {
		this.losses.lost(lease, reason);
	}

	List<LockInfo> heldLocks() {
		long now = System.nanoTime();
		return this.watchdog.leases()
			.stream()
			.filter(Lease::isActive)
			.map((lease) -> new LockInfo(lease.key(), lease.lockName(), lease.fencingToken(), lease.acquiredAt(),
					Duration.ofNanos(Math.max(0, lease.deadlineNanos() - now)), lease.renewed(),
					lease.holder().getName(), lease.depth()))
			.sorted(java.util.Comparator.comparing(LockInfo::acquiredAt))
			.toList();
	}

	long pttl(String key) {
		return this.commands.pttl(key);
	}

	boolean exists(String key) {
		return this.commands.exists(key);
	}

	long leasesLost() {
		return this.losses.count();
	}

	Watchdog watchdog() {
		return this.watchdog;
	}

	ReleaseWaiters waiters() {
		return this.waiters;
	}

	private static byte[] nextToken() {
		byte[] token = new byte[16];
		random.nextBytes(token);
		return token;
	}

	@Override
	public void close() {
		this.watchdog.close();
		this.scheduler.shutdownNow();
		this.waiters.close();
		this.commands.close();
	}

}
