package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.blockhound.BlockHound;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock} on methods returning {@code Mono}/{@code Flux}, called as a
 * WebFlux handler calls a service: subscribed on Reactor's non-blocking threads.
 * BlockHound (installed for this JVM, which this class has to itself: see the surefire
 * execution {@code blockhound}) records every blocking call on a non-blocking thread
 * (Reactor's parallel and single schedulers, Netty's event loops, so the Redis client's
 * I/O threads too).
 */
@RedisTest
class ReactiveMethodsBlockHoundTests {

	private static final List<String> blockingCalls = new CopyOnWriteArrayList<>();

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class,
				LockstepReactiveAutoConfiguration.class))
		.withUserConfiguration(StockConfiguration.class)
		.withPropertyValues("lockstep.key-prefix=reactive:");

	private RedisClient probeClient;

	private RedisCommands<String, String> probe;

	@BeforeAll
	static void installBlockHound() {
		BlockHound.install((builder) -> builder
			.blockingMethodCallback((method) -> blockingCalls.add(Thread.currentThread().getName() + " called " + method
					+ " at " + List.of(new Throwable().getStackTrace()).subList(0, 12))));
	}

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
		this.probeClient = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.probe = this.probeClient.connect().sync();
		blockingCalls.clear();
	}

	@AfterEach
	void stop() {
		this.probeClient.shutdown();
	}

	@Test
	void theCheckSeesABlockingCallOnANonBlockingThread() {
		Mono.fromRunnable(() -> {
			try {
				// the blocking call BlockHound must see (the control), 1 ms
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(5));
		System.out.printf("control: a Thread.sleep on a parallel thread is recorded: %d blocking call(s)%n",
				blockingCalls.size());
		assertThat(blockingCalls).hasSize(1);
		assertThat(blockingCalls.get(0)).startsWith("parallel-").contains("sleep");
	}

	@Test
	void eightConcurrentSubscribersOnOneKeyNeverOverlapAndNoThreadBlocks() {
		this.contextRunner.run((context) -> {
			Stock stock = context.getBean(Stock.class);
			Ledger ledger = context.getBean(Ledger.class);
			int subscribers = 8;
			int each = 100;
			long start = System.nanoTime();
			Long done = Flux.range(0, subscribers)
				.flatMap((subscriber) -> Flux.range(0, each)
					.concatMap((i) -> (i % 2 == 0) ? stock.deduct("mug") : stock.recount("mug").then(Mono.just(0)))
					.subscribeOn(Schedulers.parallel()), subscribers)
				.count()
				.block(Duration.ofMinutes(2));
			long millis = (System.nanoTime() - start) / 1_000_000;
			System.out
				.printf("@DistributedLock Mono/Flux, %d concurrent subscribers on one key: %d calls, %d overlaps, "
						+ "counter %d, %d ms (%.0f calls/s), work on %s; blocking calls on non-blocking threads: %d%n",
						subscribers, done, ledger.overlaps.get(), ledger.counter, millis, done * 1000.0 / millis,
						ledger.threads, blockingCalls.size());
			assertThat(done).isEqualTo(subscribers * each);
			assertThat(ledger.overlaps.get()).isZero();
			assertThat(ledger.counter).isEqualTo(subscribers * each);
			assertThat(this.probe.exists("reactive:stock:mug")).isZero();
			assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
		});
	}

	@Test
	void cancellingTheSubscriptionReleasesTheLockWithinOneRoundTrip() {
		this.contextRunner.run((context) -> {
			Stock stock = context.getBean(Stock.class);
			CountDownLatch streaming = new CountDownLatch(3);
			Disposable subscription = stock.follow("mug")
				.subscribeOn(Schedulers.parallel())
				.subscribe((tick) -> streaming.countDown());
			assertThat(streaming.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(this.probe.exists("reactive:stock:mug")).isOne();
			long cancelled = System.nanoTime();
			// from a non-blocking thread, as when a WebFlux client disconnects
			Schedulers.parallel().schedule(subscription::dispose);
			long gone = awaitGone("reactive:stock:mug");
			System.out.printf("annotated Flux: cancel to key gone %.2f ms; blocking calls: %d%n",
					(gone - cancelled) / 1e6, blockingCalls.size());
			assertThat((gone - cancelled) / 1e6).isLessThan(200);
			assertThat(context.getBean(Ledger.class).followCancelled).isTrue();
			assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
		});
	}

	@Test
	void aLostLeaseEndsTheAnnotatedFluxWithLockLostException() {
		this.contextRunner.withPropertyValues("lockstep.lease-time=900ms").run((context) -> {
			Stock stock = context.getBean(Stock.class);
			long[] deletedAt = { 0 };
			StepVerifier.create(stock.follow("cup").subscribeOn(Schedulers.parallel())).expectNextCount(3).then(() -> {
				deletedAt[0] = System.nanoTime();
				assertThat(this.probe.del("reactive:stock:cup")).isOne();
			}).thenConsumeWhile((tick) -> true).expectErrorSatisfies((error) -> {
				double millis = (System.nanoTime() - deletedAt[0]) / 1e6;
				System.out.printf("annotated Flux, key deleted from outside: %s in the stream after %.0f ms%n",
						error.getClass().getSimpleName(), millis);
				assertThat(error).isInstanceOf(LockLostException.class).hasMessageContaining("reactive:stock:cup");
			}).verify(Duration.ofSeconds(10));
			assertThat(context.getBean(Ledger.class).followCancelled).isTrue();
			assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
		});
	}

	@Test
	void heldElsewhereSkipGivesEmptyThrowGivesAnErrorSignalAndTheFallbackRuns() {
		this.contextRunner.run((context) -> {
			Stock stock = context.getBean(Stock.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			try (var held = locks.named("stock").acquire("mug")) {
				StepVerifier.create(stock.recountIfFree("mug").subscribeOn(Schedulers.parallel()))
					.expectComplete()
					.verify(Duration.ofSeconds(5));
				StepVerifier.create(stock.deductWithin("mug").subscribeOn(Schedulers.parallel()))
					.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LockAcquisitionException.class)
						.hasMessageContaining("reactive:stock:mug"))
					.verify(Duration.ofSeconds(5));
				StepVerifier.create(stock.deductOrLater("mug").subscribeOn(Schedulers.parallel()))
					.expectNext("later mug")
					.expectComplete()
					.verify(Duration.ofSeconds(10));
			}
			assertThat(context.getBean(Ledger.class).ran.get()).isZero();
			assertThat(blockingCalls).as("blocking calls on non-blocking threads").isEmpty();
		});
	}

	@Test
	void theMethodRunsOnlyOnSubscriptionAndOncePerSubscription() {
		this.contextRunner.run((context) -> {
			Stock stock = context.getBean(Stock.class);
			Ledger ledger = context.getBean(Ledger.class);
			Mono<Integer> deduct = stock.deduct("cup");
			assertThat(ledger.ran.get()).isZero();
			deduct.then(deduct).block(Duration.ofSeconds(5));
			assertThat(ledger.ran.get()).isEqualTo(2);
		});
	}

	@Test
	void otherPublishersFailStartUpNamingTheMethod() {
		this.contextRunner.withUserConfiguration(PublisherConfiguration.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("PublisherService.stream()")
				.hasMessageContaining("declare Mono or Flux"));
	}

	@Test
	void theReactiveTemplateBacksOffWithoutReactor() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class,
					LockstepReactiveAutoConfiguration.class))
			.withPropertyValues("lockstep.enabled=false");
		runner.run((context) -> assertThat(context).hasSingleBean(ReactiveLockTemplate.class));
		runner.withClassLoader(new FilteredClassLoader(Mono.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(ReactiveLockTemplate.class));
	}

	private long awaitGone(String key) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		while (System.nanoTime() < deadline) {
			if (this.probe.exists(key) == 0) {
				return System.nanoTime();
			}
		}
		throw new AssertionError(key + " still exists");
	}

	@Configuration(proxyBeanMethods = false)
	static class StockConfiguration {

		@Bean
		Ledger ledger() {
			return new Ledger();
		}

		@Bean
		Stock stock(Ledger ledger) {
			return new Stock(ledger);
		}

	}

	/** What the locked methods saw; read through this bean, not through the proxy. */
	static class Ledger {

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger overlaps = new AtomicInteger();

		final AtomicInteger ran = new AtomicInteger();

		final AtomicBoolean followCancelled = new AtomicBoolean();

		final Set<String> threads = ConcurrentHashMap.newKeySet();

		int counter;

	}

	static class Stock {

		private final Ledger ledger;

		Stock(Ledger ledger) {
			this.ledger = ledger;
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "1m")
		public Mono<Integer> deduct(String sku) {
			this.ledger.ran.incrementAndGet();
			return Mono.fromCallable(this::enter).delayElement(Duration.ofMillis(1)).map(this::exit);
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "1m", onLocked = OnLocked.SKIP)
		public Flux<Integer> recount(String sku) {
			this.ledger.ran.incrementAndGet();
			return Flux.defer(() -> Flux.just(enter())).delayElements(Duration.ofMillis(1)).map(this::exit);
		}

		@DistributedLock(key = "#sku", name = "stock", onLocked = OnLocked.SKIP)
		public Flux<Integer> recountIfFree(String sku) {
			this.ledger.ran.incrementAndGet();
			return Flux.just(0);
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "200ms")
		public Mono<Integer> deductWithin(String sku) {
			this.ledger.ran.incrementAndGet();
			return Mono.just(0);
		}

		@DistributedLock(key = "#sku", name = "stock", waitTime = "200ms", fallback = "later")
		public Mono<String> deductOrLater(String sku) {
			this.ledger.ran.incrementAndGet();
			return Mono.just("now " + sku);
		}

		Mono<String> later(String sku) {
			return Mono.just("later " + sku);
		}

		@DistributedLock(key = "#sku", name = "stock")
		public Flux<Long> follow(String sku) {
			return Flux.interval(Duration.ofMillis(10)).doOnCancel(() -> this.ledger.followCancelled.set(true));
		}

		private int enter() {
			if (this.ledger.inside.incrementAndGet() > 1) {
				this.ledger.overlaps.incrementAndGet();
			}
			this.ledger.threads.add(Thread.currentThread().getName().replaceAll("\\d+$", "N"));
			return this.ledger.counter;
		}

		private int exit(int read) {
			// a non-atomic read-modify-write: an overlap also loses an update
			this.ledger.counter = read + 1;
			this.ledger.inside.decrementAndGet();
			return read;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PublisherConfiguration {

		@Bean
		PublisherService publisherService() {
			return new PublisherService();
		}

	}

	static class PublisherService {

		@DistributedLock(key = "'stream'")
		public Publisher<String> stream() {
			return Flux.just("a");
		}

	}

}
