@file:JvmName("LockTemplateExtensions")

package io.lockstep.kotlin

import io.lockstep.LockAcquisitionException
import io.lockstep.LockHandle
import io.lockstep.LockTemplate
import io.lockstep.ReactiveLockTemplate
import io.lockstep.internal.engine.ReactiveLocks
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.asPublisher
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.reactor.mono
import kotlinx.coroutines.withContext
import reactor.core.publisher.Mono
import java.util.concurrent.atomic.AtomicBoolean
import java.util.function.Function

/**
 * Runs [block] holding the lock on [key], waiting up to the template's wait time for it
 * without blocking a thread, and returns what [block] returns.
 *
 * The lock is acquired through [ReactiveLockTemplate.execute], so keys, names, wait and
 * lease settings, lease-loss handling and the fencing token are those of the template
 * (`named`, `withWaitTime`, ... views included). The block runs in the caller's
 * coroutine context (its dispatcher, without its `Job`) and is a coroutine of its own:
 * cancelling the caller while it waits for the lock abandons the acquisition (it never
 * takes the lock); cancelling it while the block runs cancels the block. The lock is
 * released when the block returns, throws or is cancelled; the release is one round trip
 * sent on Lockstep's own threads, so a cancelled caller may resume just before the key is
 * gone. `withLock` returns or throws only once the block has ended.
 *
 * @throws LockAcquisitionException if the lock is not acquired within the wait time
 * @throws io.lockstep.LockLostException if the lease was lost while [block] ran (the
 * block is then cancelled)
 * @throws io.lockstep.LockException if Redis cannot be reached ([block] does not run)
 */
suspend fun <T> ReactiveLockTemplate.withLock(key: String, block: suspend (LockHandle) -> T): T =
	runLocked(block) { work -> execute(key, work) }

/**
 * Runs [block] holding every key of [keys], acquired all or nothing; see
 * [withLock].
 */
suspend fun <T> ReactiveLockTemplate.withLocks(keys: Collection<String>, block: suspend (LockHandle) -> T): T =
	runLocked(block) { work -> executeAll(keys, work) }

/**
 * Runs [block] as the locked work of [locked], in the caller's context without its `Job`
 * (a `Mono` cannot hold one), and returns only once [block] has ended: a lost lease or the
 * caller's cancellation cancels it without waiting for it.
 */
private suspend fun <T> runLocked(
	block: suspend (LockHandle) -> T,
	locked: (Function<LockHandle, Mono<Any>>) -> Mono<Any>,
): T {
	val context = currentCoroutineContext().minusKey(Job)
	val started = AtomicBoolean()
	val ended = CompletableDeferred<Unit>()
	try {
		@Suppress("UNCHECKED_CAST")
		return locked(
			Function { handle ->
				mono<Any>(context) {
					started.set(true)
					try {
						block(handle)
					}
					finally {
						ended.complete(Unit)
					}
				}
			},
		).awaitSingleOrNull() as T
	}
	finally {
		if (started.get()) {
			withContext(NonCancellable) { ended.await() }
		}
	}
}

/**
 * A cold [Flow] that, for each collection, acquires the lock on [key] (waiting without
 * blocking a thread), collects the flow that [block] makes, and releases the lock when
 * that flow completes or fails, or when the collector stops or is cancelled. An
 * acquisition abandoned by a cancelled collector never takes the lock. Not acquired
 * within the wait time: the flow fails with [LockAcquisitionException].
 */
fun <T : Any> ReactiveLockTemplate.flowWithLock(key: String, block: (LockHandle) -> Flow<T>): Flow<T> = flow {
	val context = currentCoroutineContext().minusKey(Job)
	emitAll(executeMany(key) { handle -> block(handle).asPublisher(context) }.asFlow())
}

/** [withLock] on the reactive view of a template built by Lockstep (and of its copies). */
suspend fun <T> LockTemplate.withLock(key: String, block: suspend (LockHandle) -> T): T =
	ReactiveLocks.of(this).withLock(key, block)

/** [withLocks] on the reactive view of a template built by Lockstep (and of its copies). */
suspend fun <T> LockTemplate.withLocks(keys: Collection<String>, block: suspend (LockHandle) -> T): T =
	ReactiveLocks.of(this).withLocks(keys, block)

/** [flowWithLock] on the reactive view of a template built by Lockstep (and of its copies). */
fun <T : Any> LockTemplate.flowWithLock(key: String, block: (LockHandle) -> Flow<T>): Flow<T> =
	ReactiveLocks.of(this).flowWithLock(key, block)

/**
 * The fencing token of the innermost lock held by the calling coroutine: inside [withLock]
 * and inside a `@DistributedLock` suspend function (read from the Reactor context that
 * Spring's coroutine support carries into it); `null` outside them.
 */
suspend fun currentFencingToken(): Long? = ReactiveLockTemplate.currentFencingToken().awaitSingleOrNull()
