package io.lockstep.kotlin

import com.example.orders.Shipments
import io.lockstep.test.RedisNode
import io.lockstep.test.RedisTest
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path

/**
 * The "Kotlin" section of `docs/reactive-and-kotlin.md`: its code block is `Shipments.kt` of
 * this test source set as it stands (so the build compiles it, with the kotlin-spring plugin a Spring Boot
 * Kotlin project has), and it runs against a real Redis.
 */
@RedisTest
class ReadmeKotlinTests {

	@Test
	fun theDocumentedKotlinBlockIsShipmentsKtAsItStands() {
		val readme = Files.readString(Path.of("..", "docs", "reactive-and-kotlin.md"))
		val section = readme.indexOf("\n## Kotlin\n")
		assertThat(section).`as`("docs/reactive-and-kotlin.md: section 'Kotlin'").isPositive()
		val from = readme.indexOf("```kotlin\n", section) + "```kotlin\n".length
		val block = readme.substring(from, readme.indexOf("```", from))
		val source = Files.readString(Path.of("src/test/kotlin/com/example/orders/Shipments.kt"))
		assertThat(block.replace("\t", "    ")).isEqualTo(source.replace("\t", "    "))
	}

	@Test
	fun theDocumentedShipmentsLockAgainstRedis(redis: RedisNode) {
		contextRunner(redis, Shipments::class.java).run { context ->
			val shipments = context.getBean(Shipments::class.java)
			val shipped = runBlocking {
				(1..4).map { async(Dispatchers.Default) { shipments.ship("order-1") } }.awaitAll()
			}
			// four holders of one key, one after the other: four fencing tokens
			assertThat(shipped.map { it.substringAfterLast(' ') }.toSet()).hasSize(4)
			assertThat(runBlocking { shipments.track("order-1").toList() })
				.containsExactly("order-1 packed", "order-1 handed over")
			assertThat(runBlocking { shipments.cancel("order-1") }).isEqualTo("cancelled kotlin:shipments:order-1")
			assertThat(redis.exists("kotlin:shipments:order-1")).isFalse()
		}
	}

}
