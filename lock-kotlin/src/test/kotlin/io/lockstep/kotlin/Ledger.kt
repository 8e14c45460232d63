package io.lockstep.kotlin

import io.lockstep.LockTemplate
import io.lockstep.autoconfigure.LockstepAutoConfiguration
import io.lockstep.autoconfigure.LockstepReactiveAutoConfiguration
import io.lockstep.internal.engine.EngineTemplate
import io.lockstep.test.Eventually
import io.lockstep.test.RedisNode
import kotlinx.coroutines.CompletableDeferred
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
import org.springframework.boot.test.context.runner.ApplicationContextRunner

/**
 * What locked work saw: callers inside at once (an overlap is a second one inside), a
 * counter updated read-suspend-write (loses updates without the lock), runs, and the
 * entry and cancellation of work that holds the lock until it is cancelled.
 */
class Ledger {

	private val inside = AtomicInteger()

	val overlaps = AtomicInteger()

	val runs = AtomicInteger()

	@Volatile
	var counter = 0

	val entered = CompletableDeferred<Unit>()

	val cancelled = CompletableDeferred<Unit>()

	fun enter() {
		runs.incrementAndGet()
		if (inside.incrementAndGet() > 1) {
			overlaps.incrementAndGet()
		}
	}

	fun exit() {
		inside.decrementAndGet()
	}

}

/** Spring Boot with Lockstep on a real Redis, keys under `kotlin:`. */
fun contextRunner(redis: RedisNode, vararg userConfigurations: Class<*>): ApplicationContextRunner =
	ApplicationContextRunner()
		.withConfiguration(
			AutoConfigurations.of(
				DataRedisAutoConfiguration::class.java,
				LockstepAutoConfiguration::class.java,
				LockstepReactiveAutoConfiguration::class.java,
			),
		)
		.withUserConfiguration(*userConfigurations)
		.withPropertyValues(
			"spring.data.redis.port=${redis.port()}",
			"lockstep.key-prefix=kotlin:",
			"lockstep.wait-time=30s",
		)

fun RedisNode.exists(key: String): Boolean = (call("EXISTS", key) as Long) == 1L

fun RedisNode.awaitGone(key: String): Boolean = Eventually.holds(Duration.ofSeconds(5)) { !exists(key) }

/**
 * Whether, within 1 s, a caller gets the lock of [key] at once (and releases it). A cancel
 * that lands while the acquisition handles another event leaves the local queue at once and
 * aborts right after: an attempt of it still on its way may queue it in Redis, and a release
 * then hands it the key until its leave, sent after that attempt, frees it a round trip
 * later. A key left to the cancelled caller would expire only with the hand-off's 5 s grant.
 */
fun LockTemplate.awaitFree(key: String): Boolean = Eventually.holds(Duration.ofSeconds(1)) {
	tryAcquire(key).map { it.close(); true }.orElse(false)
}

/** Whether, within 5 s, exactly [count] keys have local waiters of the template's engine. */
fun LockTemplate.awaitWaiters(count: Int): Boolean =
	Eventually.holds(Duration.ofSeconds(5)) { EngineTemplate.of(this)!!.engine().keysWaitedFor() == count }

/** A read-suspend-write of the counter, counted as one caller inside; returns the new value. */
suspend fun Ledger.bump(): Int {
	enter()
	try {
		val read = counter
		kotlinx.coroutines.delay(1)
		counter = read + 1
		return read + 1
	}
	finally {
		exit()
	}
}
