package io.lockstep.internal.engine;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockMode;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.ReactiveLockTemplate;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.util.Assert;

/**
 * The {@link ReactiveLockTemplate} on a {@link LockEngine}: shares the engine and the
 * settings of the {@link LockTemplate} it was made from (its copies too), and never
 * closes the engine. Each subscription acquires through {@link LockEngine#acquireAsync},
 * runs the work in {@code Flux.usingWhen} and releases through
 * {@link LeaseHandle#closeAsync()} on complete, error and cancel.
 */
public final class ReactiveLocks implements ReactiveLockTemplate {

	private final LockEngine engine;

	private final LockSettings settings;

	private ReactiveLocks(LockEngine engine, LockSettings settings) {
		this.engine = engine;
		this.settings = settings;
	}

	/**
	 * The reactive template on the engine and settings of a template built by Lockstep
	 * (Redis, Redlock or JVM-local, or a copy of one).
	 * @throws IllegalArgumentException for another {@link LockTemplate} implementation
	 */
	public static ReactiveLockTemplate of(LockTemplate template) {
		Assert.notNull(template, "'template' must not be null");
		EngineTemplate locks = EngineTemplate.of(template);
		if (locks == null) {
			throw new IllegalArgumentException(
					"Reactive locks need a LockTemplate built by Lockstep (Redis, Redlock or " + "local), got "
							+ template.getClass().getName());
		}
		return new ReactiveLocks(locks.engine(), locks.settings());
	}

	@Override
	public <T> Mono<T> execute(String key, Function<? super LockHandle, ? extends Mono<T>> work) {
		Assert.notNull(work, "'work' must not be null");
		return Mono.defer(() -> locked(this.settings.lockId(key), this.settings.waitNanos(), false, work, Flux::error)
			.singleOrEmpty());
	}

	@Override
	public <T> Mono<T> executeAll(Collection<String> keys, Function<? super LockHandle, ? extends Mono<T>> work) {
		Assert.notNull(work, "'work' must not be null");
		return Mono.defer(() -> locked(this.settings.lockId(keys), this.settings.waitNanos(), false, work, Flux::error)
			.singleOrEmpty());
	}

	@Override
	public <T> Flux<T> executeMany(String key, Function<? super LockHandle, ? extends Publisher<T>> work) {
		Assert.notNull(work, "'work' must not be null");
		return Flux.defer(() -> locked(this.settings.lockId(key), this.settings.waitNanos(), false, work, Flux::error));
	}

	@Override
	public <T> Mono<T> tryExecute(String key, Function<? super LockHandle, ? extends Mono<T>> work) {
		Assert.notNull(work, "'work' must not be null");
		return Mono
			.defer(() -> locked(this.settings.lockId(key), 0, true, work, (ex) -> Flux.<T>empty()).singleOrEmpty());
	}

	@Override
	public <T> Flux<T> tryExecuteMany(String key, Function<? super LockHandle, ? extends Publisher<T>> work) {
		Assert.notNull(work, "'work' must not be null");
		return Flux.defer(() -> locked(this.settings.lockId(key), 0, true, work, (ex) -> Flux.<T>empty()));
	}

	/**
	 * Streams the work holding every key (one key or several, all or nothing), waiting up
	 * to this copy's wait time; when not acquired in time, streams what
	 * {@code notAcquired} returns instead (for {@code @DistributedLock}: an error, an
	 * empty stream or the fallback).
	 * @param skips whether {@code notAcquired} skips the work ({@code onLocked = SKIP}):
	 * the acquisition is then observed as {@code skipped}, not {@code timeout}
	 */
	public <T> Flux<T> executeMany(Collection<String> keys, Function<? super LockHandle, ? extends Publisher<T>> work,
			Function<? super LockAcquisitionException, ? extends Publisher<T>> notAcquired, boolean skips) {
		Assert.notNull(work, "'work' must not be null");
		Assert.notNull(notAcquired, "'notAcquired' must not be null");
		// one key is the lock of that key, which a read lock or a semaphore can take too
		return Flux.defer(() -> locked(
				(keys.size() == 1) ? this.settings.lockId(keys.iterator().next()) : this.settings.lockId(keys),
				this.settings.waitNanos(), skips, work, notAcquired));
	}

	private <T> Flux<T> locked(LockId id, long waitNanos, boolean skips,
			Function<? super LockHandle, ? extends Publisher<T>> work,
			Function<? super LockAcquisitionException, ? extends Publisher<T>> notAcquired) {
		return Flux.deferContextual((context) -> {
			LockHandle outer = context.getOrDefault(LockHandle.class, null);
			if (outer instanceof LeaseHandle held && this.engine.owns(held) && held.isHeld()
					&& held.keys().containsAll(id.keys())) {
				// the subscription holds every key already: it re-enters them the same
				// way
				try {
					held.checkReentry(id);
				}
				catch (LockException ex) {
					return Flux.error(ex);
				}
				return Flux.from(work.apply(held));
			}
			Mono<LeaseHandle> handle = acquire(id, waitNanos, skips);
			if (outer instanceof LeaseHandle held && this.engine.owns(held) && held.isHeld()
					&& id.keys().stream().anyMatch(held.keys()::contains)) {
				// it holds some of the keys: acquires only the others, as a blocking call
				// does
				try {
					held.checkReentry(id);
				}
				catch (LockException ex) {
					return Flux.error(ex);
				}
				List<String> missing = id.keys().stream().filter((key) -> !held.keys().contains(key)).toList();
				handle = acquire(id.withKeys(missing), waitNanos, skips)
					.map((acquired) -> this.engine.widened(id, held, acquired));
			}
			return Flux
				.usingWhen(handle, (lock) -> guarded(lock, work), (lock) -> Mono.fromFuture(lock.closeAsync()),
						(lock, error) -> quietly(lock.closeAsync()), (lock) -> quietly(lock.closeAsync()))
				.onErrorResume(NotAcquired.class, (ex) -> notAcquired.apply(ex.exception));
		});
	}

	/**
	 * The work with the handle in its context; a lease lost meanwhile cancels it and ends
	 * the stream with {@link LockLostException}.
	 */
	private <T> Flux<T> guarded(LeaseHandle handle, Function<? super LockHandle, ? extends Publisher<T>> work) {
		AtomicReference<String> lostReason = new AtomicReference<>();
		Sinks.One<String> lost = Sinks.one();
		handle.onLoss((reason) -> {
			Runnable tell = () -> {
				lostReason.set(reason);
				lost.tryEmitValue(reason);
			};
			try {
				// found on the watchdog's thread: the work is cancelled, and the stream
				// ends, on a worker
				this.engine.asyncThreads().workers().execute(tell);
			}
			catch (LockException ex) {
				tell.run();
			}
		});
		return Flux.from(work.apply(handle))
			.contextWrite((context) -> context.put(LockHandle.class, handle))
			.takeUntilOther(lost.asMono())
			.concatWith(Mono.defer(() -> {
				String reason = lostReason.get();
				return (reason != null) ? Mono.error(new LockLostException(handle.key(), reason)) : Mono.empty();
			}));
	}

	private Mono<LeaseHandle> acquire(LockId id, long waitNanos, boolean skips) {
		return Mono.create((sink) -> {
			long start = System.nanoTime();
			CompletableFuture<LeaseHandle> acquisition = this.engine
				.acquireAsync(this.settings.request(id, waitNanos, skips));
			sink.onCancel(() -> {
				if (!acquisition.cancel(false)) {
					// granted just before the cancel: the subscriber will not release it
					LeaseHandle handle = acquisition.getNow(null);
					if (handle != null) {
						handle.closeAsync();
					}
				}
			});
			acquisition.whenComplete((handle, failure) -> {
				if (failure != null) {
					if (!(failure instanceof CancellationException)) {
						sink.error(unwrap(failure));
					}
				}
				else if (handle == null) {
					sink.error(new NotAcquired(
							new LockAcquisitionException(id.display(), Duration.ofNanos(System.nanoTime() - start))));
				}
				else {
					sink.success(handle);
				}
			});
		});
	}

	private static Mono<Void> quietly(CompletableFuture<Void> release) {
		return Mono.fromFuture(release).onErrorResume((ex) -> Mono.empty());
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	@Override
	public ReactiveLockTemplate withWaitTime(Duration waitTime) {
		return new ReactiveLocks(this.engine, this.settings.withWaitTime(waitTime));
	}

	@Override
	public ReactiveLockTemplate withLeaseTime(Duration leaseTime) {
		return new ReactiveLocks(this.engine, this.settings.withLeaseTime(leaseTime));
	}

	@Override
	public ReactiveLockTemplate withMinHoldTime(Duration minHoldTime) {
		return new ReactiveLocks(this.engine, this.settings.withMinHoldTime(minHoldTime, this.engine.maxHoldTime()));
	}

	@Override
	public ReactiveLockTemplate named(String name) {
		return new ReactiveLocks(this.engine, this.settings.named(name));
	}

	@Override
	public ReactiveLockTemplate withLockName(String lockName) {
		return new ReactiveLocks(this.engine, this.settings.withLockName(lockName));
	}

	@Override
	public ReactiveLockTemplate read() {
		return shared(LockMode.READ, this.settings.sharing().permits(), "read()");
	}

	@Override
	public ReactiveLockTemplate write() {
		return shared(LockMode.WRITE, this.settings.sharing().permits(), "write()");
	}

	@Override
	public ReactiveLockTemplate withPermits(int permits) {
		return shared(this.settings.sharing().mode(), permits, "withPermits(" + permits + ")");
	}

	private ReactiveLockTemplate shared(LockMode mode, int permits, String view) {
		return new ReactiveLocks(this.engine,
				EngineTemplate.sharedSettings(this.engine, this.settings, mode, permits, view));
	}

	/** The acquisition's wait elapsed; carried past the work's own errors. */
	private static final class NotAcquired extends RuntimeException {

		private static final long serialVersionUID = 1L;

		private final transient LockAcquisitionException exception;

		NotAcquired(LockAcquisitionException exception) {
			super(exception.getMessage(), null, false, false);
			this.exception = exception;
		}

	}

}
