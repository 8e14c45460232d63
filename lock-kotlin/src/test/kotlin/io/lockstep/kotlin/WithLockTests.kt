package io.lockstep.kotlin

import io.lockstep.LockAcquisitionException
import io.lockstep.LockLostException
import io.lockstep.LockTemplate
import io.lockstep.ReactiveLockTemplate
import io.lockstep.test.RedisNode
import io.lockstep.test.RedisTest
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import java.time.Duration

/**
 * `withLock`, `withLocks` and `flowWithLock` on `LockTemplate` and `ReactiveLockTemplate`:
 * the block runs holding the lock, and the lock is released when it returns, throws or is
 * cancelled; a caller cancelled while it waits never takes the lock.
 */
@RedisTest
class WithLockTests {

	private lateinit var redis: RedisNode

	private lateinit var contextRunner: ApplicationContextRunner

	@BeforeEach
	fun useRedis(redis: RedisNode) {
		this.redis = redis
		this.contextRunner = contextRunner(redis).withBean(Ledger::class.java)
	}

	@Test
	fun twoHundredConcurrentWithLockCallsOnOneKeyNeverOverlap() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			val callers = 8
			val each = 25
			val start = System.nanoTime()
			runBlocking {
				(1..callers).map {
					async(Dispatchers.Default) { repeat(each) { locks.withLock("42") { ledger.bump() } } }
				}.awaitAll()
			}
			val millis = (System.nanoTime() - start) / 1_000_000
			println(
				"withLock, $callers concurrent coroutines on one key: ${callers * each} calls, " +
					"${ledger.overlaps.get()} overlaps, counter ${ledger.counter}, $millis ms",
			)
			assertThat(ledger.overlaps.get()).isZero()
			assertThat(ledger.counter).isEqualTo(callers * each)
			assertThat(redis.exists("kotlin:orders:42")).isFalse()
		}
	}

	@Test
	fun withLockReturnsTheBlocksValueAndGivesItTheHandle() {
		contextRunner.run { context ->
			val locks = context.getBean(ReactiveLockTemplate::class.java).named("orders")
			val (key, token, held) = runBlocking {
				locks.withLock("42") { lock -> Triple(lock.key(), lock.fencingToken(), redis.exists("kotlin:orders:42")) }
			}
			assertThat(key).isEqualTo("kotlin:orders:42")
			assertThat(held).isTrue()
			assertThat(runBlocking { locks.withLock("42") { currentFencingToken() } }).isGreaterThan(token)
			val nothing: String? = runBlocking { locks.withLock("42") { null } }
			assertThat(nothing).isNull()
			assertThat(redis.exists("kotlin:orders:42")).isFalse()
		}
	}

	@Test
	fun withLocksHoldsEveryKey() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val held = runBlocking {
				locks.withLocks(listOf("1", "2")) { redis.exists("kotlin:orders:1") && redis.exists("kotlin:orders:2") }
			}
			assertThat(held).isTrue()
			assertThat(redis.exists("kotlin:orders:1") || redis.exists("kotlin:orders:2")).isFalse()
		}
	}

	@Test
	fun anExceptionFromTheBlockReachesTheCallerAndReleasesTheLock() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			assertThatExceptionOfType(IllegalStateException::class.java)
				.isThrownBy { runBlocking { locks.withLock("42") { delay(1); throw IllegalStateException("refused") } } }
				.withMessage("refused")
			assertThat(redis.exists("kotlin:orders:42")).isFalse()
		}
	}

	@Test
	fun heldElsewhereWithLockThrowsLockAcquisitionExceptionAfterTheWaitTime() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			locks.acquire("42").use {
				assertThatExceptionOfType(LockAcquisitionException::class.java)
					.isThrownBy { runBlocking { locks.withWaitTime(Duration.ofMillis(50)).withLock("42") { ledger.bump() } } }
					.withMessageContaining("kotlin:orders:42")
			}
			assertThat(ledger.runs.get()).isZero()
		}
	}

	@Test
	fun cancellingTheCallerWhileItWaitsAbandonsTheAcquisitionAndNeverTakesTheLock() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			val holder = locks.acquire("42")
			runBlocking {
				val waiting = launch(Dispatchers.Default) { locks.withLock("42") { ledger.bump() } }
				assertThat(locks.awaitWaiters(1)).`as`("the caller waits for the lock").isTrue()
				waiting.cancelAndJoin()
			}
			assertThat(locks.awaitWaiters(0)).`as`("the acquisition abandoned").isTrue()
			holder.close()
			assertThat(locks.awaitFree("42")).`as`("the lock is free for the next caller").isTrue()
			assertThat(ledger.runs.get()).isZero()
		}
	}

	@Test
	fun cancellingTheCallerWhileItHoldsTheLockEndsTheBlockAndReleasesTheLock() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			runBlocking {
				val holding = launch(Dispatchers.Default) {
					locks.withLock("42") {
						ledger.entered.complete(Unit)
						try {
							awaitCancellation()
						}
						finally {
							ledger.cancelled.complete(Unit)
						}
					}
				}
				withTimeout(10_000) { ledger.entered.await() }
				assertThat(redis.exists("kotlin:orders:42")).isTrue()
				val cancelled = System.nanoTime()
				holding.cancelAndJoin()
				assertThat(ledger.cancelled.isCompleted).`as`("the block ended before withLock did").isTrue()
				assertThat(redis.awaitGone("kotlin:orders:42")).isTrue()
				println("withLock cancelled while holding: key gone %.2f ms after the cancel".format((System.nanoTime() - cancelled) / 1e6))
			}
		}
	}

	@Test
	fun aLostLeaseCancelsTheBlockAndEndsWithLockWithLockLostExceptionOnceTheBlockHasEnded() {
		contextRunner.withPropertyValues("lockstep.lease-time=900ms").run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			runBlocking {
				val outcome = async(Dispatchers.Default) {
					runCatching {
						locks.withLock("42") {
							ledger.entered.complete(Unit)
							try {
								awaitCancellation()
							}
							finally {
								ledger.cancelled.complete(Unit)
							}
						}
					}
				}
				withTimeout(10_000) { ledger.entered.await() }
				val deleted = System.nanoTime()
				assertThat(redis.call("DEL", "kotlin:orders:42")).isEqualTo(1L)
				val failure = withTimeout(10_000) { outcome.await() }.exceptionOrNull()
				println("withLock, key deleted from outside: %s after %.0f ms".format(failure?.javaClass?.simpleName, (System.nanoTime() - deleted) / 1e6))
				assertThat(failure).isInstanceOf(LockLostException::class.java).hasMessageContaining("kotlin:orders:42")
				assertThat(ledger.cancelled.isCompleted).`as`("the block ended before withLock did").isTrue()
			}
		}
	}

	@Test
	fun withLockInsideWithLockOnTheSameKeyReentersTheOuterLock() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders").withWaitTime(Duration.ofSeconds(2))
			val (outer, inner) = runBlocking {
				locks.withLock("42") { outer -> outer.fencingToken() to locks.withLock("42") { it.fencingToken() } }
			}
			assertThat(inner).isEqualTo(outer)
			assertThat(redis.exists("kotlin:orders:42")).isFalse()
		}
	}

	@Test
	fun flowWithLockHoldsTheLockForEachCollection() {
		contextRunner.run { context ->
			val locks = context.getBean(LockTemplate::class.java).named("orders")
			val ledger = context.getBean(Ledger::class.java)
			val orders = locks.flowWithLock("42") {
				flow {
					repeat(3) { emit(ledger.bump()) }
				}
			}
			val collected = runBlocking {
				(1..4).map { async(Dispatchers.Default) { (1..10).flatMap { orders.toList() } } }.awaitAll().flatten()
			}
			assertThat(collected).hasSize(4 * 10 * 3).doesNotHaveDuplicates()
			assertThat(ledger.overlaps.get()).isZero()
			val first: Int = runBlocking { locks.flowWithLock("42") { flow<Int> { emit(1); awaitCancellation() } }.first() }
			assertThat(first).isEqualTo(1)
			assertThat(redis.awaitGone("kotlin:orders:42")).isTrue()
		}
	}

}
