package io.lockstep.interceptor;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

import org.springframework.aop.ProxyMethodInvocation;

/**
 * A {@link io.lockstep.DistributedLock} method that returns {@code Mono}, {@code Flux} or
 * Kotlin's {@code Flow}, or is a {@code suspend fun} (see {@link Coroutines}): locked for
 * each subscription through {@link ReactiveLocks} (acquired on subscribe without
 * blocking, released on complete, error or cancel). The method itself runs only once the
 * lock is held, once per subscription. Not acquired within the wait time: {@code SKIP}
 * gives an empty {@code Mono}/{@code Flux}, {@code THROW} an error
 * {@link LockAcquisitionException}, a fallback its own {@code Mono}/{@code Flux}. Loaded
 * only for such methods, so Reactor stays optional.
 */
final class ReactiveInvocation {

	private ReactiveInvocation() {
	}

	static Object proceed(LockOperation operation, LockTemplate template, List<String> keys,
			MethodInvocation invocation, @Nullable Object target, @Nullable Object[] args) {
		ReactiveLocks locks = (ReactiveLocks) ReactiveLocks.of(template);
		// what the method's own publisher fails with may be another lock's: not named
		// here
		Set<Throwable> fromMethod = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
		Flux<Object> locked = locks
			.executeMany(keys, (lock) -> Flux.from(proceedOnce(invocation)).doOnError(fromMethod::add),
					(ex) -> notAcquired(operation, target, args, ex), operation.skips())
			.onErrorMap(LockException.class, (ex) -> fromMethod.remove(ex) ? ex : operation.named(ex));
		ReturnKind kind = operation.returnKind();
		if (kind == ReturnKind.FLOW) {
			return Coroutines.adapter(invocation.getMethod().getReturnType()).fromPublisher(locked);
		}
		return kind.isSingle() ? locked.singleOrEmpty() : locked;
	}

	/** Runs the rest of the advice chain (and the method) again for each subscription. */
	private static Publisher<Object> proceedOnce(MethodInvocation invocation) {
		MethodInvocation call = (invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
				: invocation;
		try {
			return publisher(call.proceed());
		}
		catch (Throwable ex) {
			return Flux.error(ex);
		}
	}

	private static Publisher<Object> notAcquired(LockOperation operation, @Nullable Object target,
			@Nullable Object[] args, LockAcquisitionException ex) {
		if (operation.skips()) {
			return Flux.empty();
		}
		try {
			return publisher(operation.notAcquired(target, args, operation.named(ex)));
		}
		catch (Throwable failure) {
			return Flux.error(failure);
		}
	}

	/**
	 * What a method (or its fallback) returned, as a {@code Publisher}: a {@code Mono} or
	 * {@code Flux} as it is (Spring's AOP returns a {@code suspend fun}'s call as one), a
	 * {@code Flow} through its adapter.
	 */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> publisher(@Nullable Object result) {
		if (result == null) {
			return Flux.empty();
		}
		if (result instanceof Publisher<?> publisher) {
			return (Publisher<Object>) publisher;
		}
		return (Publisher<Object>) Coroutines.adapter(result.getClass()).toPublisher(result);
	}

}
