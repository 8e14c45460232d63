package io.lockstep.kotlin

import io.lockstep.DistributedLock
import io.lockstep.LockAcquisitionException
import io.lockstep.LockTemplate
import io.lockstep.test.RedisNode
import io.lockstep.test.RedisTest
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
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
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@DistributedLock` on methods returning Kotlin's `Flow` (and on a `suspend fun`
 * returning one): locked for each collection, acquired without blocking a thread and
 * released when the flow completes or fails, or the collector stops or is cancelled.
 */
@RedisTest
class FlowMethodsTests {

	private lateinit var redis: RedisNode

	private lateinit var contextRunner: ApplicationContextRunner

	@BeforeEach
	fun useRedis(redis: RedisNode) {
		this.redis = redis
		Feed.redis = redis
		this.contextRunner = contextRunner(redis, FeedConfiguration::class.java)
	}

	@Test
	fun concurrentCollectionsOfAFlowMethodOnOneKeyNeverOverlap() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val ledger = context.getBean(Ledger::class.java)
			val collectors = 6
			val each = 20
			val start = System.nanoTime()
			val elements = runBlocking {
				(1..collectors).map {
					async(Dispatchers.Default) { (1..each).flatMap { feed.bump("news").toList() } }
				}.awaitAll().flatten()
			}
			val millis = (System.nanoTime() - start) / 1_000_000
			println(
				"@DistributedLock Flow, $collectors concurrent collectors on one key: ${collectors * each} " +
					"collections, ${ledger.overlaps.get()} overlaps, counter ${ledger.counter}, $millis ms",
			)
			assertThat(elements).hasSize(collectors * each * 3)
			assertThat(ledger.overlaps.get()).isZero()
			assertThat(ledger.counter).isEqualTo(collectors * each * 3)
			assertThat(redis.exists("kotlin:feed:news")).isFalse()
		}
	}

	@Test
	fun aSuspendFunReturningAFlowIsLockedForEachCollection() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val ledger = context.getBean(Ledger::class.java)
			val elements = runBlocking {
				(1..4).map {
					async(Dispatchers.Default) { (1..10).flatMap { feed.bumpLater("news").toList() } }
				}.awaitAll().flatten()
			}
			assertThat(elements).hasSize(4 * 10 * 3)
			assertThat(ledger.overlaps.get()).isZero()
			assertThat(ledger.counter).isEqualTo(4 * 10 * 3)
			assertThat(redis.exists("kotlin:feed:news")).isFalse()
		}
	}

	@Test
	fun theMethodRunsOnlyWhenTheFlowIsCollectedAndHoldsTheLockMeanwhile() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val ledger = context.getBean(Ledger::class.java)
			val flow = feed.watch("news")
			assertThat(ledger.runs.get()).isZero()
			runBlocking {
				val heldWhileCollecting = flow.toList().all { it }
				assertThat(heldWhileCollecting).isTrue()
			}
			assertThat(ledger.runs.get()).isOne()
			assertThat(redis.exists("kotlin:feed:news")).isFalse()
		}
	}

	@Test
	fun aFailingFlowFailsTheCollectorAndReleasesTheLock() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			assertThatExceptionOfType(IllegalStateException::class.java)
				.isThrownBy { runBlocking { feed.broken("news").toList() } }
				.withMessage("feed broken: news")
			assertThat(redis.exists("kotlin:feed:news")).isFalse()
		}
	}

	@Test
	fun aCollectorThatStopsEarlyReleasesTheLock() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val ledger = context.getBean(Ledger::class.java)
			val first = runBlocking { feed.endless("news").first() }
			assertThat(first).isZero()
			assertThat(redis.awaitGone("kotlin:feed:news")).isTrue()
			assertThat(ledger.cancelled.isCompleted).isTrue()
		}
	}

	@Test
	fun cancellingTheCollectorWhileItWaitsAbandonsTheAcquisitionAndNeverTakesTheLock() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val locks = context.getBean(LockTemplate::class.java)
			val holder = locks.named("feed").acquire("news")
			runBlocking {
				val waiting = launch(Dispatchers.Default) { feed.bump("news").toList() }
				assertThat(locks.awaitWaiters(1)).`as`("the collector waits for the lock").isTrue()
				waiting.cancelAndJoin()
			}
			assertThat(locks.awaitWaiters(0)).`as`("the acquisition abandoned").isTrue()
			holder.close()
			assertThat(locks.named("feed").awaitFree("news")).`as`("the lock is free for the next caller").isTrue()
			assertThat(context.getBean(Ledger::class.java).runs.get()).isZero()
		}
	}

	@Test
	fun cancellingTheCollectorWhileItHoldsTheLockCancelsTheFlowAndReleasesTheLock() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val ledger = context.getBean(Ledger::class.java)
			runBlocking {
				val collecting = launch(Dispatchers.Default) { feed.endless("news").toList() }
				withTimeout(10_000) { ledger.entered.await() }
				assertThat(redis.exists("kotlin:feed:news")).isTrue()
				val cancelled = System.nanoTime()
				collecting.cancelAndJoin()
				withTimeout(10_000) { ledger.cancelled.await() }
				assertThat(redis.awaitGone("kotlin:feed:news")).isTrue()
				println("Flow collector cancelled while holding: key gone %.2f ms after the cancel".format((System.nanoTime() - cancelled) / 1e6))
			}
		}
	}

	@Test
	fun heldElsewhereTheFallbackFlowIsCollectedInstead() {
		contextRunner.run { context ->
			val feed = context.getBean(Feed::class.java)
			val locks = context.getBean(LockTemplate::class.java)
			locks.named("feed").acquire("news").use {
				assertThat(runBlocking { feed.bumpOrCached("news").toList() }).containsExactly(-1)
				assertThatExceptionOfType(LockAcquisitionException::class.java)
					.isThrownBy { runBlocking { feed.bumpWithin("news").toList() } }
					.withMessageContaining("kotlin:feed:news")
			}
			assertThat(context.getBean(Ledger::class.java).runs.get()).isZero()
		}
	}

	@Configuration(proxyBeanMethods = false)
	open class FeedConfiguration {

		@Bean
		open fun ledger() = Ledger()

		@Bean
		open fun feed(ledger: Ledger) = Feed(ledger)

	}

	open class Feed(private val ledger: Ledger) {

		@DistributedLock(key = "#topic", name = "feed")
		open fun bump(topic: String): Flow<Int> = counted()

		@DistributedLock(key = "#topic", name = "feed")
		open suspend fun bumpLater(topic: String): Flow<Int> {
			delay(1)
			return counted()
		}

		@DistributedLock(key = "#topic", name = "feed", waitTime = "50ms", fallback = "cached")
		open fun bumpOrCached(topic: String): Flow<Int> = counted()

		@DistributedLock(key = "#topic", name = "feed", waitTime = "50ms")
		open fun bumpWithin(topic: String): Flow<Int> = counted()

		open fun cached(topic: String): Flow<Int> = flow { emit(-1) }

		@DistributedLock(key = "#topic", name = "feed")
		open fun watch(topic: String): Flow<Boolean> = flow {
			ledger.enter()
			try {
				repeat(3) {
					delay(2)
					emit(redis?.exists("kotlin:feed:$topic") ?: false)
				}
			}
			finally {
				ledger.exit()
			}
		}

		@DistributedLock(key = "#topic", name = "feed")
		open fun broken(topic: String): Flow<Int> = flow {
			emit(1)
			throw IllegalStateException("feed broken: $topic")
		}

		@DistributedLock(key = "#topic", name = "feed")
		open fun endless(topic: String): Flow<Int> = flow {
			ledger.entered.complete(Unit)
			try {
				emit(0)
				awaitCancellation()
			}
			finally {
				ledger.cancelled.complete(Unit)
			}
		}

		/** Three elements, each a read-suspend-write of the counter. */
		private fun counted(): Flow<Int> = flow {
			ledger.enter()
			try {
				repeat(3) {
					val read = ledger.counter
					delay(1)
					ledger.counter = read + 1
					emit(read + 1)
				}
			}
			finally {
				ledger.exit()
			}
		}

		companion object {
			@Volatile
			var redis: RedisNode? = null
		}

	}

}
