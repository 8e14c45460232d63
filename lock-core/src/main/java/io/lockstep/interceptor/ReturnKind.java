package io.lockstep.interceptor;

/** What a locked method returns, as far as the lock is concerned. */
enum ReturnKind {

	/** A value: the lock is held while the method runs. */
	PLAIN,

	/** {@code CompletableFuture}/{@code CompletionStage}: held until it completes. */
	FUTURE,

	/** Reactor's {@code Mono}: held for each subscription. */
	MONO,

	/** Reactor's {@code Flux}: held for each subscription. */
	FLUX,

	/**
	 * Kotlin's {@code Flow}, adapted to a {@code Flux} and back through Spring's
	 * {@code ReactiveAdapterRegistry}: held for each collection.
	 */
	FLOW,

	/**
	 * A Kotlin {@code suspend fun}: Spring's AOP runs it as a {@code Mono} and the proxy
	 * awaits that {@code Mono} on the caller's continuation; held for the call.
	 */
	SUSPEND,

	/**
	 * A Kotlin {@code suspend fun} returning a {@code Flow}: Spring's AOP runs it as a
	 * {@code Flux} and the proxy hands the caller that {@code Flux} as a {@code Flow};
	 * held for each collection.
	 */
	SUSPEND_FLOW;

	boolean isReactive() {
		return this != PLAIN && this != FUTURE;
	}

	/** Whether the lock is held for one value (else for a stream). */
	boolean isSingle() {
		return this == MONO || this == SUSPEND;
	}

}
