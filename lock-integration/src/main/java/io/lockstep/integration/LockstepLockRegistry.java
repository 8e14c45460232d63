package io.lockstep.integration;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.ThreadOwnedLock;
import io.lockstep.internal.engine.EngineTemplate;
import org.jspecify.annotations.Nullable;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.util.Assert;

/**
 * Spring Integration's {@link RenewableLockRegistry} on a Lockstep {@link LockTemplate},
 * so that {@code LockRegistryLeaderInitiator} (leader election) and every Spring
 * Integration component that takes a {@code LockRegistry} run on Lockstep's locks, with
 * their fencing tokens, lease-loss detection, metrics and endpoint.
 *
 * <p>
 * A key {@code k} locks {@code String.valueOf(k)} on the template: the Redis key is the
 * template's ({@code <key-prefix>[<name>:]<k>}; use {@link LockTemplate#named(String)} to
 * give the registry's locks a name of their own). Each lock is owned by the thread that
 * locked it and reentrant for it; {@code unlock()} by another thread throws
 * {@link IllegalMonitorStateException}. {@code lock()} waits until it gets the lock (the
 * template's wait time does not apply); Redis trouble fails at once with a
 * {@link io.lockstep.LockException}. The lease is the template's: a watchdog lease,
 * renewed until {@code unlock()}, unless the template has a fixed one.
 * {@code lock(Duration ttl)} and {@code tryLock(wait, ttl)} take a fixed lease of
 * {@code ttl}, never renewed: the lock is not safe past it unless
 * {@link #renewLock(Object, Duration)} extends it in time.
 *
 * <p>
 * When a lease is lost while held (Redis unreachable longer than the lease, the key
 * deleted), a re-entry by the holder, such as the leader initiator's heartbeat, throws
 * {@link io.lockstep.LockLostException}, and {@code unlock()} ends the hold: leadership
 * then ends, and another candidate can take over once the key expired.
 */
public final class LockstepLockRegistry implements RenewableLockRegistry<DistributedLock> {

	private final LockTemplate template;

	private final ConcurrentMap<String, RegistryLock> locks = new ConcurrentHashMap<>();

	public LockstepLockRegistry(LockTemplate template) {
		Assert.notNull(template, "'template' must not be null");
		this.template = template;
	}

	/**
	 * The lock of the key: the same instance for equal keys, kept by the registry (one
	 * small object per key obtained; a lock held by a thread must be found again by
	 * {@code obtain}, so none is evicted).
	 * @throws IllegalArgumentException if the key is {@code null}
	 * @throws io.lockstep.LockKeyException if its string is empty or too long
	 */
	@Override
	public DistributedLock obtain(Object lockKey) {
		Assert.notNull(lockKey, "'lockKey' must not be null");
		String key = String.valueOf(lockKey);
		return this.locks.computeIfAbsent(key, (name) -> new RegistryLock(new ThreadOwnedLock(this.template, name)));
	}

	/**
	 * Renews the calling thread's lock of the key with the template's lease time: its
	 * lease now ends that long from now (see {@link LockHandle#extend(Duration)}).
	 * @throws IllegalStateException if the calling thread does not hold the lock, or its
	 * lease was lost
	 */
	@Override
	public void renewLock(Object lockKey) {
		renew(lockKey, null);
	}

	/**
	 * Renews the calling thread's lock of the key: its lease now ends {@code ttl} from
	 * now (never past {@code max-hold-time}); a fixed lease stays fixed.
	 * @throws IllegalStateException if the calling thread does not hold the lock, or its
	 * lease was lost
	 */
	@Override
	public void renewLock(Object lockKey, Duration ttl) {
		Assert.notNull(ttl, "'ttl' must not be null");
		renew(lockKey, ttl);
	}

	private void renew(Object lockKey, @Nullable Duration ttl) {
		Assert.notNull(lockKey, "'lockKey' must not be null");
		String key = String.valueOf(lockKey);
		RegistryLock lock = this.locks.get(key);
		LockHandle handle = (lock != null) ? lock.owned().handle() : null;
		if (lock == null || handle == null) {
			throw new IllegalStateException("Cannot renew lock '" + key + "': it is not held by thread '"
					+ Thread.currentThread().getName() + "'");
		}
		Duration lease = (ttl != null) ? ttl : leaseTime(lock);
		if (!handle.extend(lease)) {
			throw new IllegalStateException("Cannot renew lock '" + key + "': its lease was lost");
		}
	}

	/**
	 * The lease the calling thread's lock was taken with: its {@code ttl}, else the
	 * template's lease time.
	 */
	private Duration leaseTime(RegistryLock lock) {
		Duration ttl = lock.ttl();
		if (ttl != null) {
			return ttl;
		}
		EngineTemplate engine = EngineTemplate.of(this.template);
		if (engine == null) {
			throw new IllegalStateException("renewLock(key) needs the lease time of the template, which "
					+ this.template + " does not tell: use renewLock(key, ttl)");
		}
		return engine.leaseTime();
	}

	@Override
	public String toString() {
		return "LockstepLockRegistry[" + this.template + "]";
	}

}
