package io.lockstep.benchmarks;

import java.util.List;
import java.util.function.Function;

import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * The contenders by the name used as JMH parameter, in the order the report shows them.
 */
enum Contenders {

	FLOOR("floor", "busy-spin floor (raw Lettuce EVALSHA ×2)", FloorContender::new),

	LOCKSTEP("lockstep", "Lockstep (watchdog lease)", LockstepContender::new),

	REDISSON("redisson", "Redisson `RLock` (watchdog)", RedissonContender::new),

	SI_SPIN("si-spin", "SI `RedisLockRegistry` spin",
			(redis) -> new SpringIntegrationContender(redis, RedisLockType.SPIN_LOCK)),

	SI_PUBSUB("si-pubsub", "SI `RedisLockRegistry` pub/sub",
			(redis) -> new SpringIntegrationContender(redis, RedisLockType.PUB_SUB_LOCK));

	private final String id;

	private final String title;

	private final Function<RedisTarget, Contender> factory;

	Contenders(String id, String title, Function<RedisTarget, Contender> factory) {
		this.id = id;
		this.title = title;
		this.factory = factory;
	}

	/** The JMH parameter value, e.g. {@code si-pubsub}. */
	String id() {
		return this.id;
	}

	/** The column title in the report. */
	String title() {
		return this.title;
	}

	/**
	 * The row title in the details of {@code scenario}: for RW and SEM, what the
	 * contender measures there when that is not its plain lock.
	 */
	String title(Scenario scenario) {
		if (this == REDISSON && scenario == Scenario.RW) {
			return "Redisson `RReadWriteLock` (watchdog)";
		}
		if (this == REDISSON && scenario == Scenario.SEM) {
			return "Redisson `RPermitExpirableSemaphore` (" + RedissonContender.PERMIT_LEASE_SECONDS
					+ " s lease per permit)";
		}
		return this.title;
	}

	Contender create(RedisTarget redis) {
		return this.factory.apply(redis);
	}

	static Contenders of(String id) {
		for (Contenders contender : values()) {
			if (contender.id.equals(id)) {
				return contender;
			}
		}
		throw new IllegalArgumentException("Unknown contender '" + id + "', expected one of " + ids());
	}

	static List<String> ids() {
		return List.of(values()).stream().map(Contenders::id).toList();
	}

}
