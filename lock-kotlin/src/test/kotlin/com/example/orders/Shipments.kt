package com.example.orders

import io.lockstep.DistributedLock
import io.lockstep.LockTemplate
import io.lockstep.kotlin.currentFencingToken
import io.lockstep.kotlin.withLock
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.springframework.stereotype.Service

@Service
class Shipments(private val locks: LockTemplate) {

	// Held while the coroutine runs, suspended or not; released when it returns,
	// throws or is cancelled. Waiting for the lock suspends: no thread is blocked.
	@DistributedLock(key = "#orderId", name = "shipments")
	suspend fun ship(orderId: String): String {
		delay(10) // book the carrier
		return "shipped $orderId with fencing token ${currentFencingToken()}"
	}

	// Held for each collection of the flow, until it completes or the collector stops.
	@DistributedLock(key = "#orderId", name = "shipments")
	fun track(orderId: String): Flow<String> = flow {
		emit("$orderId packed")
		delay(10)
		emit("$orderId handed over")
	}

	// The programmatic form, on LockTemplate or ReactiveLockTemplate.
	suspend fun cancel(orderId: String): String =
		locks.named("shipments").withLock(orderId) { lock -> "cancelled ${lock.key()}" }

}
