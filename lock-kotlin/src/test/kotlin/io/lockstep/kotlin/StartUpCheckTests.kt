package io.lockstep.kotlin

import io.lockstep.DistributedLock
import io.lockstep.LockAcquisitionException
import io.lockstep.OnLocked
import io.lockstep.test.RedisNode
import io.lockstep.test.RedisTest
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.emptyFlow
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.springframework.boot.test.context.runner.ApplicationContextRunner

/**
 * Every `@DistributedLock` method is checked when the application starts: `suspend` and
 * `Flow` methods pass; a broken one fails start-up with a message naming it as Kotlin
 * declares it.
 */
@RedisTest
class StartUpCheckTests {

	private lateinit var contextRunner: ApplicationContextRunner

	@BeforeEach
	fun useRedis(redis: RedisNode) {
		this.contextRunner = contextRunner(redis)
	}

	@Test
	fun suspendAndFlowMethodsPassTheStartUpCheck() {
		contextRunner.withBean(Accepted::class.java).run { context ->
			assertThat(context).hasNotFailed()
		}
	}

	@Test
	fun aBadKeyOnASuspendFunFailsStartUpNamingTheMethod() {
		contextRunner.withBean(BadKey::class.java).run { context ->
			assertThat(context).hasFailed()
			assertThat(lockFailure(context.startupFailure))
				.contains("@DistributedLock on ${BadKey::class.java.name}.deduct(String): key '#nope'")
				.contains("refers to '#nope', which is not a parameter")
		}
	}

	@Test
	fun skipOnASuspendFunWhoseResultCannotBeNullFailsStartUp() {
		contextRunner.withBean(SkipNonNull::class.java).run { context ->
			assertThat(context).hasFailed()
			assertThat(lockFailure(context.startupFailure))
				.contains("@DistributedLock on ${SkipNonNull::class.java.name}.deduct(String): return type")
				.contains("is not nullable (Integer), but a skipped suspend fun returns null: declare it nullable")
		}
	}

	@Test
	fun aHotStateFlowFailsStartUp() {
		contextRunner.withBean(Ticker::class.java).run { context ->
			assertThat(context).hasFailed()
			assertThat(lockFailure(context.startupFailure))
				.contains("@DistributedLock on ${Ticker::class.java.name}.ticks(): return type")
				.contains("declare Flow, which holds the lock for each collection")
		}
	}

	@Test
	fun aSuspendFunsFallbackMustBeASuspendFunWithItsParameters() {
		contextRunner.withBean(PlainFallback::class.java).run { context ->
			assertThat(context).hasFailed()
			assertThat(lockFailure(context.startupFailure))
				.contains("@DistributedLock on ${PlainFallback::class.java.name}.deduct(String): fallback 'later'")
				.contains("must be a suspend fun later(String) or later(String, LockAcquisitionException)")
		}
	}

	@Test
	fun aFinalSuspendFunFailsStartUpSayingHowToOpenIt() {
		contextRunner.withBean(NotOpen::class.java).run { context ->
			assertThat(context).hasFailed()
			assertThat(lockFailure(context.startupFailure))
				.contains("@DistributedLock on ${NotOpen::class.java.name}.deduct(String): the method is public final")
				.contains("Kotlin classes and functions are final unless declared open")
		}
	}

	/** The message of the start-up check, wherever it is in the failure's causes. */
	private fun lockFailure(failure: Throwable?): String =
		generateSequence(failure!!) { it.cause }.mapNotNull { it.message }.first { it.startsWith("@DistributedLock on") }

	open class Accepted {

		@DistributedLock(key = "#sku")
		open suspend fun deduct(sku: String): Int = 1

		@DistributedLock(key = "#sku", onLocked = OnLocked.SKIP)
		open suspend fun deductIfFree(sku: String): Int? = 1

		@DistributedLock(key = "#sku", onLocked = OnLocked.SKIP)
		open suspend fun recount(sku: String) {
		}

		@DistributedLock(key = "#sku", fallback = "later")
		open suspend fun deductOrLater(sku: String): Int = 1

		open suspend fun later(sku: String, ex: LockAcquisitionException): Int = 0

		@DistributedLock(key = "#sku")
		open fun follow(sku: String): Flow<Int> = emptyFlow()

		@DistributedLock(key = "#sku")
		open suspend fun followLater(sku: String): Flow<Int> = emptyFlow()

	}

	open class BadKey {

		@DistributedLock(key = "#nope")
		open suspend fun deduct(sku: String): Int = 1

	}

	open class SkipNonNull {

		@DistributedLock(key = "#sku", onLocked = OnLocked.SKIP)
		open suspend fun deduct(sku: String): Int = 1

	}

	open class Ticker {

		@DistributedLock(key = "'ticks'")
		open fun ticks(): StateFlow<Int> = MutableStateFlow(0)

	}

	open class NotOpen {

		@DistributedLock(key = "#sku")
		suspend fun deduct(sku: String): Int = 1

	}

	open class PlainFallback {

		@DistributedLock(key = "#sku", fallback = "later")
		open suspend fun deduct(sku: String): Int = 1

		open fun later(sku: String): Int = 0

	}

}
