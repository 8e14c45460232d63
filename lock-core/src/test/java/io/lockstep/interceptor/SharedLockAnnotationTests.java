package io.lockstep.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.DistributedLock;
import io.lockstep.LockKeyException;
import io.lockstep.LockMode;
import io.lockstep.LockTemplate;
import io.lockstep.internal.LockConfigurationException;
import io.lockstep.internal.engine.EngineTemplate;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redlock.Redlock;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.autoproxy.DefaultAdvisorAutoProxyCreator;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import reactor.core.publisher.Mono;
import reactor.util.function.Tuple2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock(mode, permits)} on a real Redis: read methods of one key run
 * together while a write method excludes them, a semaphore method admits its permits and
 * never more, blocking, future and {@code Mono} methods alike; bad attributes, and read
 * locks or semaphores on Redlock, fail the start naming the method; a collection key
 * fails a read or semaphore call naming the method.
 */
@RedisTest
class SharedLockAnnotationTests {

	private static final Duration BOUND = Duration.ofSeconds(30);

	private final ExecutorService pool = Executors.newFixedThreadPool(8);

	private RedisClient client;

	private RedisLockTemplate locks;

	@BeforeEach
	void start(RedisNode redis) {
		this.client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.locks = RedisLockTemplate.builder(this.client).waitTime(BOUND).build();
	}

	@AfterEach
	void stop() {
		this.pool.shutdownNow();
		this.locks.close();
		this.client.shutdown();
	}

	@Test
	void twoReadMethodCallsOfOneKeyAreInsideAtOnce() throws Exception {
		try (AnnotationConfigApplicationContext context = context(this.locks, Documents.class)) {
			Documents documents = context.getBean(Documents.class);
			Ledger ledger = documents.ledger();
			CountDownLatch arrived = new CountDownLatch(2);
			// each reader waits inside for the other: only if both are inside at once
			Callable<Boolean> meet = () -> {
				arrived.countDown();
				return arrived.await(5, TimeUnit.SECONDS);
			};
			Future<Boolean> first = this.pool.submit(() -> documents.read("doc:1", meet));
			Future<Boolean> second = this.pool.submit(() -> documents.read("doc:1", meet));
			assertThat(first.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("first reader met the second").isTrue();
			assertThat(second.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("second reader met the first").isTrue();
			assertThat(ledger.mostReaders.get()).isEqualTo(2);
		}
	}

	@Test
	void aWriteMethodWaitsUntilTheReadersOfItsKeyHaveLeft() throws Exception {
		try (AnnotationConfigApplicationContext context = context(this.locks, Documents.class)) {
			Documents documents = context.getBean(Documents.class);
			Ledger ledger = documents.ledger();
			CountDownLatch arrived = new CountDownLatch(2);
			CountDownLatch leave = new CountDownLatch(1);
			Callable<Boolean> stay = () -> {
				arrived.countDown();
				return leave.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			};
			List<Future<Boolean>> readers = List.of(this.pool.submit(() -> documents.read("doc:2", stay)),
					this.pool.submit(() -> documents.read("doc:2", stay)));
			assertThat(arrived.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("both readers inside").isTrue();
			Future<Integer> writer = this.pool.submit(() -> documents.write("doc:2", ledger.readers::get));
			await("the writer waits").atMost(BOUND).until(() -> waitersOf("doc:2") == 1);
			assertThat(writer.isDone()).isFalse();
			assertThat(ledger.writes.get()).isZero();
			leave.countDown();
			assertThat(writer.get(BOUND.toSeconds(), TimeUnit.SECONDS)).as("readers inside with the writer").isZero();
			for (Future<Boolean> reader : readers) {
				assertThat(reader.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
			}
		}
	}

	@Test
	void readAndWriteMethodsOfOneKeyNeverLetAWriterOverlapAnyone() throws Exception {
		try (AnnotationConfigApplicationContext context = context(this.locks, Documents.class)) {
			Documents documents = context.getBean(Documents.class);
			Ledger ledger = documents.ledger();
			Callable<Boolean> work = () -> {
				LockSupport.parkNanos(200_000);
				return true;
			};
			int threads = 4;
			int calls = 250;
			List<Future<Integer>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				done.add(this.pool.submit(() -> {
					int count = 0;
					for (int i = 0; i < calls; i++) {
						// one call in four writes
						if (ThreadLocalRandom.current().nextInt(4) == 0) {
							documents.write("doc:3", work);
						}
						else {
							documents.read("doc:3", work);
						}
						count++;
					}
					return count;
				}));
			}
			int total = 0;
			for (Future<Integer> each : done) {
				total += each.get(2, TimeUnit.MINUTES);
			}
			System.out.printf(
					"@DistributedLock read/write, %d threads: %d calls (%d writes), %d overlaps with a writer, "
							+ "most readers inside at once %d%n",
					threads, total, ledger.writes.get(), ledger.overlaps.get(), ledger.mostReaders.get());
			assertThat(total).isEqualTo(threads * calls);
			assertThat(ledger.writes.get()).isPositive();
			assertThat(ledger.overlaps.get()).isZero();
		}
	}

	@Test
	void aMethodWithTwoPermitsAdmitsTwoCallsAtOnceAndNeverThree() throws Exception {
		try (AnnotationConfigApplicationContext context = context(this.locks, Exports.class)) {
			Exports exports = context.getBean(Exports.class);
			Ledger ledger = exports.ledger();
			CountDownLatch arrived = new CountDownLatch(3);
			CountDownLatch leave = new CountDownLatch(1);
			Callable<Boolean> stay = () -> {
				arrived.countDown();
				return leave.await(BOUND.toSeconds(), TimeUnit.SECONDS);
			};
			List<Future<Boolean>> callers = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				callers.add(this.pool.submit(() -> exports.export(stay)));
			}
			await("two inside, the third waits").atMost(BOUND)
				.until(() -> arrived.getCount() == 1 && waitersOf("export") == 1);
			assertThat(ledger.inside.get()).isEqualTo(2);
			leave.countDown();
			for (Future<Boolean> caller : callers) {
				assertThat(caller.get(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
			}
			assertThat(arrived.getCount()).isZero();
			int threads = 4;
			int calls = 200;
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				done.add(this.pool.submit(() -> {
					for (int i = 0; i < calls; i++) {
						exports.export(() -> {
							LockSupport.parkNanos(200_000);
							return true;
						});
					}
					return null;
				}));
			}
			for (Future<?> each : done) {
				each.get(2, TimeUnit.MINUTES);
			}
			System.out.printf(
					"@DistributedLock permits = 2, %d threads: %d calls, %d times more than 2 inside, most "
							+ "inside at once %d%n",
					threads, ledger.calls.get(), ledger.overfull.get(), ledger.most.get());
			assertThat(ledger.calls.get()).isEqualTo(3 + threads * calls);
			assertThat(ledger.overfull.get()).isZero();
			assertThat(ledger.most.get()).isEqualTo(2);
		}
	}

	@Test
	void twoReadMonoSubscriptionsOfOneKeyAreInsideAtOnce() {
		try (AnnotationConfigApplicationContext context = context(this.locks, ReactiveDocuments.class)) {
			ReactiveDocuments documents = context.getBean(ReactiveDocuments.class);
			AtomicInteger inside = new AtomicInteger();
			CompletableFuture<Boolean> both = new CompletableFuture<>();
			// each subscription waits inside for the other: only if both are inside at
			// once
			Supplier<Mono<Boolean>> meet = () -> {
				if (inside.incrementAndGet() == 2) {
					both.complete(true);
				}
				return Mono.fromFuture(both, true).timeout(Duration.ofSeconds(5), Mono.just(false));
			};
			Tuple2<Boolean, Boolean> met = Mono.zip(documents.read("doc:4", meet), documents.read("doc:4", meet))
				.block(BOUND);
			assertThat(met).isNotNull();
			assertThat(List.of(met.getT1(), met.getT2())).as("each subscription met the other")
				.containsExactly(true, true);
		}
	}

	@Test
	void twoReadFutureCallsOfOneKeyAreInsideAtOnce() throws Exception {
		try (AnnotationConfigApplicationContext context = context(this.locks, Documents.class)) {
			Documents documents = context.getBean(Documents.class);
			Ledger ledger = documents.ledger();
			CountDownLatch arrived = new CountDownLatch(2);
			// the lock is held until each future completes, which is once both are inside
			Supplier<Boolean> meet = () -> {
				arrived.countDown();
				try {
					return arrived.await(5, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			};
			Future<CompletableFuture<Boolean>> first = this.pool
				.submit(() -> documents.readLater("doc:5", meet, this.pool));
			Future<CompletableFuture<Boolean>> second = this.pool
				.submit(() -> documents.readLater("doc:5", meet, this.pool));
			assertThat(first.get(BOUND.toSeconds(), TimeUnit.SECONDS).get(BOUND.toSeconds(), TimeUnit.SECONDS))
				.isTrue();
			assertThat(second.get(BOUND.toSeconds(), TimeUnit.SECONDS).get(BOUND.toSeconds(), TimeUnit.SECONDS))
				.isTrue();
		}
	}

	@Test
	void aCollectionKeyFailsAReadCallNamingTheMethodWithoutRunningIt() {
		try (AnnotationConfigApplicationContext context = context(this.locks, Documents.class)) {
			Documents documents = context.getBean(Documents.class);
			Ledger ledger = documents.ledger();
			assertThatExceptionOfType(LockKeyException.class)
				.isThrownBy(() -> documents.readAll(List.of("doc:6", "doc:7")))
				.withMessageStartingWith("@DistributedLock on " + Documents.class.getName() + ".readAll(List)")
				.withMessageContainingAll("key '#ids' evaluated to a collection of 2", "the read lock (mode = READ)",
						"takes one key");
			assertThat(ledger.reads.get()).isZero();
		}
	}

	@Test
	void anArrayKeyFailsASemaphoreCallNamingTheMethodWithoutRunningIt() {
		try (AnnotationConfigApplicationContext context = context(this.locks, Exports.class)) {
			Exports exports = context.getBean(Exports.class);
			Ledger ledger = exports.ledger();
			assertThatExceptionOfType(LockKeyException.class).isThrownBy(() -> exports.exportAll(new String[] { "a" }))
				.withMessageStartingWith("@DistributedLock on " + Exports.class.getName() + ".exportAll(String[])")
				.withMessageContainingAll("key '#ids' evaluated to an array of 1",
						"a semaphore of 2 permits (permits = 2)", "takes one key");
			assertThat(ledger.calls.get()).isZero();
		}
	}

	@Test
	void permitsBelowOneFailStartUpNamingTheMethod() {
		assertThat(startUpFailure(this.locks, NoPermits.class))
			.hasMessageStartingWith("@DistributedLock on " + NoPermits.class.getName() + ".run()")
			.hasMessageContaining("permits = 0 must be at least 1");
	}

	@Test
	void aReadLockWithPermitsFailsStartUpNamingTheMethod() {
		assertThat(startUpFailure(this.locks, ReadPermits.class))
			.hasMessageStartingWith("@DistributedLock on " + ReadPermits.class.getName() + ".run()")
			.hasMessageContaining("mode = READ and permits = 3 exclude each other");
	}

	@Test
	void aReadMethodOnRedlockFailsStartUpNamingTheMethod(RedisFixture fixture) {
		try (RedisLockTemplate redlock = redlock(fixture)) {
			// every such method at once, not one per start-up
			assertThat(startUpFailure(redlock, Documents.class))
				.hasMessageStartingWith("3 @DistributedLock methods ask for what Redlock cannot honour:")
				.hasMessageContainingAll("@DistributedLock on " + Documents.class.getName() + ".read(String, Callable)",
						"@DistributedLock on " + Documents.class.getName() + ".readAll(List)",
						"@DistributedLock on " + Documents.class.getName() + ".readLater(",
						"mode = READ cannot be honoured", "Redlock supports exclusive locks only");
		}
	}

	@Test
	void aSemaphoreMethodOnRedlockFailsStartUpNamingTheMethod(RedisFixture fixture) {
		try (RedisLockTemplate redlock = redlock(fixture)) {
			assertThat(startUpFailure(redlock, Exports.class))
				.hasMessageStartingWith("2 @DistributedLock methods ask for what Redlock cannot honour:")
				.hasMessageContainingAll("@DistributedLock on " + Exports.class.getName() + ".export(Callable)",
						"@DistributedLock on " + Exports.class.getName() + ".exportAll(String[])",
						"permits = 2 cannot be honoured", "Redlock supports exclusive locks only");
		}
	}

	private int waitersOf(String key) {
		return EngineTemplate.of(this.locks).engine().waitersOf(this.locks.keyPrefix() + key);
	}

	private static RedisLockTemplate redlock(RedisFixture fixture) {
		List<RedisURI> nodes = fixture.masters(3, "--appendonly", "yes")
			.stream()
			.map((node) -> RedisURI.create(node.host(), node.port()))
			.toList();
		return Redlock.nodes(nodes).builder().build();
	}

	/** The start-up failure, with the action that the failure analysis shows. */
	private static LockConfigurationException startUpFailure(LockTemplate locks, Class<?> bean) {
		Throwable failure = catchThrowable(() -> context(locks, bean).close());
		assertThat(failure).as("start-up failure").isNotNull();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof LockConfigurationException configuration) {
				assertThat(configuration.action()).isNotBlank();
				return configuration;
			}
		}
		throw new AssertionError("No LockConfigurationException in the chain", failure);
	}

	/** An application context with the advisor, proxying the beans' classes. */
	private static AnnotationConfigApplicationContext context(LockTemplate locks, Class<?>... beans) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.registerBean(DefaultAdvisorAutoProxyCreator.class, () -> {
			DefaultAdvisorAutoProxyCreator creator = new DefaultAdvisorAutoProxyCreator();
			creator.setProxyTargetClass(true);
			return creator;
		});
		context.registerBean(DistributedLockAdvisor.class, () -> new DistributedLockAdvisor(() -> locks));
		for (Class<?> bean : beans) {
			context.registerBean(bean);
		}
		context.refresh();
		return context;
	}

	/**
	 * What the methods of a bean counted (a class proxy's own fields are not the bean's).
	 */
	static final class Ledger {

		final AtomicInteger readers = new AtomicInteger();

		final AtomicInteger writers = new AtomicInteger();

		final AtomicInteger mostReaders = new AtomicInteger();

		final AtomicInteger overlaps = new AtomicInteger();

		final AtomicInteger reads = new AtomicInteger();

		final AtomicInteger writes = new AtomicInteger();

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger most = new AtomicInteger();

		final AtomicInteger overfull = new AtomicInteger();

		final AtomicInteger calls = new AtomicInteger();

	}

	static class Documents {

		private final Ledger ledger = new Ledger();

		Ledger ledger() {
			return this.ledger;
		}

		@DistributedLock(key = "#id", mode = LockMode.READ)
		<T> T read(String id, Callable<T> inside) throws Exception {
			this.ledger.reads.incrementAndGet();
			this.ledger.mostReaders.accumulateAndGet(this.ledger.readers.incrementAndGet(), Math::max);
			if (this.ledger.writers.get() != 0) {
				this.ledger.overlaps.incrementAndGet();
			}
			try {
				return inside.call();
			}
			finally {
				this.ledger.readers.decrementAndGet();
			}
		}

		@DistributedLock(key = "#id", mode = LockMode.WRITE)
		<T> T write(String id, Callable<T> inside) throws Exception {
			this.ledger.writes.incrementAndGet();
			if (this.ledger.writers.incrementAndGet() != 1 || this.ledger.readers.get() != 0) {
				this.ledger.overlaps.incrementAndGet();
			}
			try {
				return inside.call();
			}
			finally {
				this.ledger.writers.decrementAndGet();
			}
		}

		@DistributedLock(key = "#id", mode = LockMode.READ)
		CompletableFuture<Boolean> readLater(String id, Supplier<Boolean> inside, ExecutorService executor) {
			return CompletableFuture.supplyAsync(inside, executor);
		}

		@DistributedLock(key = "#ids", mode = LockMode.READ)
		void readAll(List<String> ids) {
			this.ledger.reads.incrementAndGet();
		}

	}

	static class Exports {

		private final Ledger ledger = new Ledger();

		Ledger ledger() {
			return this.ledger;
		}

		@DistributedLock(key = "'export'", permits = 2)
		<T> T export(Callable<T> work) throws Exception {
			this.ledger.calls.incrementAndGet();
			int now = this.ledger.inside.incrementAndGet();
			this.ledger.most.accumulateAndGet(now, Math::max);
			if (now > 2) {
				this.ledger.overfull.incrementAndGet();
			}
			try {
				return work.call();
			}
			finally {
				this.ledger.inside.decrementAndGet();
			}
		}

		@DistributedLock(key = "#ids", permits = 2)
		void exportAll(String[] ids) {
			this.ledger.calls.incrementAndGet();
		}

	}

	static class ReactiveDocuments {

		@DistributedLock(key = "#id", mode = LockMode.READ)
		Mono<Boolean> read(String id, Supplier<Mono<Boolean>> inside) {
			return Mono.defer(inside);
		}

	}

	static class NoPermits {

		@DistributedLock(key = "'job'", permits = 0)
		void run() {
		}

	}

	static class ReadPermits {

		@DistributedLock(key = "'job'", mode = LockMode.READ, permits = 3)
		void run() {
		}

	}

}
