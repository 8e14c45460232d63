package io.lockstep.benchmarks;

import java.util.List;
import java.util.function.Function;

import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * The contenders by the name used as JMH parameter, in the order the comparison shows
 * them.
 */
enum Contenders {

	FLOOR("floor", FloorContender::new),

	PARKED("parked", ParkedFloorContender::new),

	LOCKSTEP("lockstep", LockstepContender::new),

	/**
	 * Lockstep as an application that tries a lock before it waits for it: what an
	 * acquire costs without the waiting attempt's queue keys and arguments, and what a
	 * second round trip costs a caller that finds the lock taken. Not in the default run.
	 */
	LOCKSTEP_TRY_FIRST("lockstep-try-first", (redis) -> new LockstepContender(redis, true)),

	REDISSON("redisson", RedissonContender::new),

	SI_SPIN("si-spin", (redis) -> new SpringIntegrationContender(redis, RedisLockType.SPIN_LOCK)),

	SI_PUBSUB("si-pubsub", (redis) -> new SpringIntegrationContender(redis, RedisLockType.PUB_SUB_LOCK));

	private final String id;

	private final Function<RedisTarget, Contender> factory;

	Contenders(String id, Function<RedisTarget, Contender> factory) {
		this.id = id;
		this.factory = factory;
	}

	/** The JMH parameter value, e.g. {@code si-pubsub}. */
	String id() {
		return this.id;
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

	/** The contenders of a run that names none: all but {@link #LOCKSTEP_TRY_FIRST}. */
	static List<String> defaults() {
		return ids().stream().filter((id) -> !id.equals(LOCKSTEP_TRY_FIRST.id)).toList();
	}

}
