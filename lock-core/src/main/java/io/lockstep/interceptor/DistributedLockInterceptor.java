package io.lockstep.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.internal.CallContext;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.internal.engine.Sharing;
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
		try {
			if (skipping != null) {
				// not acquired is no failure here: observed as "skipped", not "timeout"
				handle = skipping.acquireOrSkip(keys);
				if (handle == null) {
					return operation.notAcquired(target, args, null);
				}
			}
			else {
				handle = (keys.size() == 1) ? template.acquire(keys.get(0)) : template.acquireAll(keys);
			}
		}
		catch (LockAcquisitionException ex) {
			return operation.notAcquired(target, args, operation.named(ex));
		}
		catch (LockException ex) {
			throw operation.named(ex);
		}
		LockRelease release = LockRelease.bind(handle);
		return operation.async() ? proceedAsync(invocation, release, operation)
				: proceed(invocation, release, operation);
	}

	private @Nullable Object proceed(MethodInvocation invocation, LockRelease release, LockOperation operation)
			throws Throwable {
		Throwable failure = null;
		try {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			arrive(release, failure, operation);
		}
	}

	private static void arrive(LockRelease release, @Nullable Throwable failure, LockOperation operation) {
		try {
			release.arrive(failure);
		}
		catch (LockException ex) {
			throw operation.named(ex);
		}
	}

	private @Nullable Object proceedAsync(MethodInvocation invocation, LockRelease release, LockOperation operation)
			throws Throwable {
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			arrive(release, ex, operation);
			throw ex;
		}
		if (result == null) {
			arrive(release, null, operation);
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
				arrive(release, failure, operation);
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
	 * The template copy of the operation: named, with its wait time, minimum hold, fixed
	 * lease and sharing (read lock or semaphore). A skipping operation without a wait
	 * time of its own does not wait, unless its name has a configured wait ({@code named}
	 * applies that over the zero). Built once per operation, first by the advisor's check
	 * at start-up.
	 * @throws LockConfigurationException naming the method if the template rejects a
	 * setting, or cannot share keys (Redlock) for a read lock or semaphore
	 */
	LockTemplate template(LockOperation operation) {
		LockTemplate template = this.templates.get(operation);
		if (template == null) {
			try {
				template = configure(operation);
			}
			catch (IllegalArgumentException ex) {
				throw new LockConfigurationException(operation.description() + ": " + ex.getMessage(),
						"Make the attributes of the annotation fit together and with the lockstep.* properties: a "
								+ "minHoldTime no longer than a fixed leaseTime or lockstep.max-hold-time, durations "
								+ "within the limits named above.",
						ex);
			}
			catch (UnsupportedOperationException ex) {
				Sharing sharing = operation.sharing();
				throw new LockConfigurationException(
						operation.description() + ": "
								+ (sharing.read() ? "mode = READ" : "permits = " + sharing.permits())
								+ " cannot be honoured: " + ex.getMessage(),
						"Use the plain lock (mode = WRITE, permits = 1) on this method, or run Lockstep on a lock "
								+ "store that keeps read locks and semaphores: a single Redis master, Sentinel or "
								+ "Cluster (Redlock keeps exclusive locks only).",
						ex);
			}
			this.templates.put(operation, template);
		}
		return template;
	}

	private LockTemplate configure(LockOperation operation) {
		LockTemplate template = this.locks.get();
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
		Sharing sharing = operation.sharing();
		if (sharing.read()) {
			template = template.read();
		}
		else if (!sharing.exclusive()) {
			template = template.withPermits(sharing.permits());
		}
		return template;
	}

}
