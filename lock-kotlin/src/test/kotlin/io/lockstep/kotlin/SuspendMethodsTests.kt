package io.lockstep.kotlin

import io.lockstep.DistributedLock
import io.lockstep.LockAcquisitionException
import io.lockstep.LockMode
import io.lockstep.LockTemplate
import io.lockstep.OnLocked
import io.lockstep.test.RedisNode
import io.lockstep.test.RedisTest
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import java.util.concurrent.atomic.AtomicInteger

/**
 * `@DistributedLock` on Kotlin `suspend` functions: locked for the call, acquired without
 * blocking a thread and released when the function returns, throws or is cancelled.
 */
@RedisTest
class SuspendMethodsTests {

	private lateinit var redis: RedisNode

	private lateinit var contextRunner: ApplicationContextRunner

	@BeforeEach
	fun useRedis(redis: RedisNode) {
		this.redis = redis
		Stock.probe = redis
		this.contextRunner = contextRunner(redis, StockConfiguration::class.java)
	}

	@Test
	fun twoHundredConcurrentCallsOfASuspendMethodOnOneKeyNeverOverlap() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val ledger = context.getBean(Ledger::class.java)
			val callers = 8
			val each = 25
			val start = System.nanoTime()
			val results = runBlocking {
				(1..callers).map {
					async(Dispatchers.Default) { (1..each).map { stock.deduct("mug") } }
				}.awaitAll().flatten()
			}
			val millis = (System.nanoTime() - start) / 1_000_000
			println(
				"@DistributedLock suspend fun, $callers concurrent callers on one key: ${results.size} calls, " +
					"${ledger.overlaps.get()} overlaps, counter ${ledger.counter}, $millis ms",
			)
			assertThat(results).hasSize(callers * each).doesNotHaveDuplicates()
			assertThat(ledger.overlaps.get()).isZero()
			assertThat(ledger.counter).isEqualTo(callers * each)
			assertThat(redis.exists("kotlin:stock:mug")).isFalse()
		}
	}

	@Test
	fun theLockIsHeldWhileTheFunctionIsSuspendedAndReleasedWhenItReturns() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val heldInside = runBlocking { stock.checkHeld("cup") }
			assertThat(heldInside).isTrue()
			assertThat(redis.exists("kotlin:stock:cup")).isFalse()
		}
	}

	@Test
	fun anExceptionReachesTheCallerAndReleasesTheLock() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			assertThatExceptionOfType(IllegalStateException::class.java)
				.isThrownBy { runBlocking { stock.fail("cup") } }
				.withMessage("out of stock: cup")
			assertThat(redis.exists("kotlin:stock:cup")).isFalse()
			assertThat(context.getBean(Ledger::class.java).runs.get()).isOne()
		}
	}

	@Test
	fun cancellingTheCallerWhileItWaitsAbandonsTheAcquisitionAndNeverTakesTheLock() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val locks = context.getBean(LockTemplate::class.java)
			val holder = locks.named("stock").acquire("cup")
			runBlocking {
				val waiting = launch(Dispatchers.Default) { stock.deduct("cup") }
				assertThat(locks.awaitWaiters(1)).`as`("the caller waits for the lock").isTrue()
				waiting.cancelAndJoin()
			}
			assertThat(locks.awaitWaiters(0)).`as`("the acquisition abandoned").isTrue()
			holder.close()
			// a later caller gets the lock: nobody keeps it for the cancelled caller
			assertThat(locks.named("stock").awaitFree("cup")).`as`("the lock is free for the next caller").isTrue()
			assertThat(context.getBean(Ledger::class.java).runs.get()).isZero()
		}
	}

	@Test
	fun cancellingTheCallerWhileItHoldsTheLockCancelsTheWorkAndReleasesTheLock() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val ledger = context.getBean(Ledger::class.java)
			runBlocking {
				val holding = launch(Dispatchers.Default) { stock.holdUntilCancelled("cup") }
				withTimeout(10_000) { ledger.entered.await() }
				assertThat(redis.exists("kotlin:stock:cup")).isTrue()
				val cancelled = System.nanoTime()
				holding.cancelAndJoin()
				withTimeout(10_000) { ledger.cancelled.await() }
				assertThat(redis.awaitGone("kotlin:stock:cup")).isTrue()
				println("suspend fun cancelled while holding: key gone %.2f ms after the cancel".format((System.nanoTime() - cancelled) / 1e6))
			}
		}
	}

	@Test
	fun heldElsewhereSkipReturnsNullThrowRaisesLockAcquisitionExceptionAndTheFallbackRuns() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val locks = context.getBean(LockTemplate::class.java)
			locks.named("stock").acquire("cup").use {
				assertThat(runBlocking { stock.deductIfFree("cup") }).isNull()
				assertThatExceptionOfType(LockAcquisitionException::class.java)
					.isThrownBy { runBlocking { stock.deductWithin("cup") } }
					.withMessageContaining("kotlin:stock:cup")
				assertThat(runBlocking { stock.deductOrLater("cup") }).isEqualTo("later cup after kotlin:stock:cup")
			}
			assertThat(context.getBean(Ledger::class.java).runs.get()).isZero()
		}
	}

	@Test
	fun twoCallsOfAReadSuspendFunOfOneKeyAreInsideAtOnce() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val inside = AtomicInteger()
			val both = CompletableDeferred<Unit>()
			// each call waits inside for the other: only if both are inside at once
			val met = runBlocking {
				(1..2).map { async(Dispatchers.Default) { stock.countShared("mug", inside, both) } }.awaitAll()
			}
			assertThat(met).containsExactly(true, true)
			assertThat(redis.exists("kotlin:stock:mug")).isFalse()
		}
	}

	@Test
	fun theFencingTokenIsVisibleInsideTheLockedFunction() {
		contextRunner.run { context ->
			val stock = context.getBean(Stock::class.java)
			val first = runBlocking { stock.fencingToken("cup") }
			val second = runBlocking { stock.fencingToken("cup") }
			assertThat(first).isNotNull().isPositive()
			assertThat(second).isGreaterThan(first)
			assertThat(runBlocking { currentFencingToken() }).isNull()
		}
	}

	@Configuration(proxyBeanMethods = false)
	open class StockConfiguration {

		@Bean
		open fun ledger() = Ledger()

		@Bean
		open fun stock(ledger: Ledger) = Stock(ledger)

	}

	open class Stock(private val ledger: Ledger) {

		@DistributedLock(key = "#sku", name = "stock")
		open suspend fun deduct(sku: String): Int {
			ledger.enter()
			try {
				val read = ledger.counter
				delay(1)
				ledger.counter = read + 1
				return read + 1
			}
			finally {
				ledger.exit()
			}
		}

		@DistributedLock(key = "#sku", name = "stock")
		open suspend fun checkHeld(sku: String): Boolean {
			yield()
			delay(5)
			return exists("kotlin:stock:$sku")
		}

		@DistributedLock(key = "#sku", name = "stock")
		open suspend fun fail(sku: String): Int {
			ledger.enter()
			try {
				delay(1)
				throw IllegalStateException("out of stock: $sku")
			}
			finally {
				ledger.exit()
			}
		}

		@DistributedLock(key = "#sku", name = "stock")
		open suspend fun holdUntilCancelled(sku: String) {
			ledger.entered.complete(Unit)
			try {
				awaitCancellation()
			}
			finally {
				ledger.cancelled.complete(Unit)
			}
		}

		@DistributedLock(key = "#sku", name = "stock", onLocked = OnLocked.SKIP)
		open suspend fun deductIfFree(sku: String): Int? {
			ledger.enter()
			ledger.exit()
			return 1
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "50ms")
		open suspend fun deductWithin(sku: String): Int {
			ledger.enter()
			ledger.exit()
			return 1
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "50ms", fallback = "later")
		open suspend fun deductOrLater(sku: String): String {
			ledger.enter()
			ledger.exit()
			return "now $sku"
		}

		open suspend fun later(sku: String, ex: LockAcquisitionException): String {
			delay(1)
			return "later $sku after ${ex.key}"
		}

		@DistributedLock(key = "#sku", name = "stock", mode = LockMode.READ)
		open suspend fun countShared(sku: String, inside: AtomicInteger, both: CompletableDeferred<Unit>): Boolean {
			if (inside.incrementAndGet() == 2) {
				both.complete(Unit)
			}
			return withTimeoutOrNull(5_000) { both.await() } != null
		}

		@DistributedLock(key = "#sku", name = "stock")
		open suspend fun fencingToken(sku: String): Long? {
			delay(1)
			return currentFencingToken()
		}

		private fun exists(key: String): Boolean = probe?.exists(key) ?: false

		companion object {
			@Volatile
			var probe: RedisNode? = null
		}

	}

}
