package io.lockstep.kotlin

import io.lockstep.LockCallback
import io.lockstep.LockMonitor
import io.lockstep.LockTemplate
import io.lockstep.local.LocalLockTemplate
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * Lockstep's public packages are `@NullMarked` (JSpecify), which Kotlin reads as strict
 * nullability: these calls, made through the public interfaces, compile only while those
 * say what may be `null`; they run on JVM-local locks.
 */
class NullabilityTests {

	@Test
	fun executeReturnsWhatTheCallbackReturnsNullIncluded() {
		LocalLockTemplate.builder().build().use { template ->
			val locks: LockTemplate = template
			val nothing: String? = locks.execute("a") { null }
			val something: String = locks.execute("a") { lock -> lock.key() }
			val all: Int? = locks.executeAll(listOf("a", "b")) { null }
			assertThat(nothing).isNull()
			assertThat(something).isEqualTo("lockstep:a")
			assertThat(all).isNull()
		}
	}

	@Test
	fun tryExecuteTurnsANullResultIntoEmpty() {
		LocalLockTemplate.builder().build().use { template ->
			val locks: LockTemplate = template
			val nullable: LockCallback<String?> = LockCallback { null }
			assertThat(locks.tryExecute("a", nullable)).isEmpty()
			assertThat(locks.tryExecute("a") { lock -> lock.key() }).contains("lockstep:a")
		}
	}

	@Test
	fun theLastRenewalFailureIsNullableAndNullWhileRenewalsSucceed() {
		LocalLockTemplate.builder().build().use { template ->
			val monitor: LockMonitor = template
			val failure: String? = monitor.lastRenewalFailure()
			assertThat(failure).isNull()
		}
	}

}
