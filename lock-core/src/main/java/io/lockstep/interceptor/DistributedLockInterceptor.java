package io.lockstep.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.internal.CallContext;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.transaction.LockRelease;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;

/**
 * Runs a {@link io.lockstep.DistributedLock} method holding its lock: evaluates the key,
 * acquires through the configured {@link LockTemplate} copy (or skips, falls back or
 * throws), and releases when the call returns, when its future completes, or when the
 * transaction that was active at acquisition completes, whichever is last.
 */
final class DistributedLockInterceptor implements MethodInterceptor {

	private final LockOperationSource operations;

	private final Supplier<? extends LockTemplate> locks;

	private final Map<LockOperation, LockTemplate> templates = new ConcurrentHashMap<>();

	DistributedLockInterceptor(LockOperationSource operations, Supplier<? extends LockTemplate> locks) {
		this.operations = operations;
		this.locks = locks;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		LockOperation operation = this.operations.get(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		Object[] args = invocation.getArguments();
		List<String> keys = operation.keys(args, target, targetClass);
		if (operation.returnKind().isReactive()) {
			return ReactiveInvocation.proceed(operation, template(operation), keys, invocation, target, args);
		}
		LockHandle handle;
		LockTemplate template = template(operation);
		EngineTemplate skipping = operation.skips() ? EngineTemplate.of(template) : null;
		if (skipping != null) {
			// not acquired is no failure here: observed as "skipped", not "timeout"
			handle = skipping.acquireOrSkip(keys);
			if (handle == null) {
				return operation.notAcquired(target, args, null);
			}
		}
		else {
			try {
				handle = (keys.size() == 1) ? template.acquire(keys.get(0)) : template.acquireAll(keys);
			}
			catch (LockAcquisitionException ex) {
				return operation.notAcquired(target, args, ex);
			}
		}
		LockRelease release = LockRelease.bind(handle);
		return operation.async() ? proceedAsync(invocation, release) : proceed(invocation, release);
	}

	private @Nullable Object proceed(MethodInvocation invocation, LockRelease release) throws Throwable {
		Throwable failure = null;
		try {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			release.arrive(failure);
		}
	}

	private @Nullable Object proceedAsync(MethodInvocation invocation, LockRelease release) throws Throwable {
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			release.arrive(ex);
			throw ex;
		}
		if (result == null) {
			release.arrive(null);
			return null;
		}
		// the future holds the lock now: this thread's call ended
		if (release.handle() instanceof CallContext.Entry entry) {
			entry.endCall();
		}
		CompletableFuture<Object> completion = new CompletableFuture<>();
		((CompletionStage<?>) result).whenComplete((value, ex) -> {
			Throwable failure = ex;
			try {
				release.arrive(failure);
			}
			catch (RuntimeException releaseFailure) {
				failure = releaseFailure;
			}
			if (failure != null) {
				completion.completeExceptionally(failure);
			}
			else {
				completion.complete(value);
			}
		});
		return completion;
	}

	/**
	 * The template copy of the operation: named, with its wait time, minimum hold and
	 * fixed lease. A skipping operation without a wait time of its own does not wait,
	 * unless its name has a configured wait ({@code named} applies that over the zero).
	 * @throws IllegalArgumentException if the template rejects a setting
	 */
	LockTemplate template(LockOperation operation) {
		LockTemplate template = this.templates.get(operation);
		if (template == null) {
			template = this.locks.get();
			if (operation.skips() && operation.waitTime() == null) {
				template = template.withWaitTime(Duration.ZERO);
			}
			template = (operation.name() != null) ? template.named(operation.name())
					: template.withLockName(operation.lockName());
			if (operation.waitTime() != null) {
				template = template.withWaitTime(operation.waitTime());
			}
			if (operation.minHoldTime() != null) {
				template = template.withMinHoldTime(operation.minHoldTime());
			}
			if (operation.leaseTime() != null) {
				template = template.withLeaseTime(operation.leaseTime());
			}
			this.templates.put(operation, template);
		}
		return template;
	}

}
