package io.lockstep.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.LockHandle;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.internal.engine.ReactiveLocks;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guarded work runs only under a grant of the caller's current owner token. A waiter
 * queued under owner token O whose re-check times out (its command connection's replies
 * are held back, while its hand-off messages still arrive) gives O up — its leave frees
 * whatever Redis handed to O — and fails with the timeout (only a lock held by another
 * owner is waited for): the hand-off to O that arrived meanwhile is void, and must never
 * let the work run while another client can take the lock.
 */
@RedisTest
class AcquisitionSafetyTests {

	private static final String KEY = "stale";

	private static final String QUEUE = "lockstep:__q:" + KEY;

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	private static final int ROUNDS = 6;

	private final List<RedisClient> clients = new ArrayList<>();

	@AfterEach
	void shutdown() {
		this.clients.forEach(RedisClient::shutdown);
	}

	@Test
	void aHandOffThatArrivesWhileTheRecheckTimesOutNeverLetsTheWorkRunWithoutTheLock(RedisFixture fixture)
			throws Exception {
		RedisNode redis = fixture.standalone();
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				RedisLockTemplate waiter = waiterTemplate(proxy);
				RedisLockTemplate holder = TestLocks.builder(client(redis.port())).build();
				RedisLockTemplate other = TestLocks.builder(client(redis.port())).build()) {
			TestLocks.warmUp(waiter);
			int unsafe = rounds("blocking", redis, proxy, holder, other,
					(work) -> CompletableFuture.supplyAsync(() -> waiter.execute(KEY, work::apply)));
			assertThat(unsafe)
				.as("rounds (of %d) in which another client's tryAcquire succeeded while the blocking "
						+ "waiter's work ran", ROUNDS)
				.isZero();
		}
	}

	@Test
	void aHandOffThatArrivesWhileAReactiveRecheckTimesOutNeverLetsTheWorkRunWithoutTheLock(RedisFixture fixture)
			throws Exception {
		RedisNode redis = fixture.standalone();
		try (ChaosProxy proxy = ChaosProxy.to(redis);
				RedisLockTemplate waiter = waiterTemplate(proxy);
				RedisLockTemplate holder = TestLocks.builder(client(redis.port())).build();
				RedisLockTemplate other = TestLocks.builder(client(redis.port())).build()) {
			TestLocks.warmUp(waiter);
			ReactiveLockTemplate reactive = reactive(waiter);
			int unsafe = rounds("reactive", redis, proxy, holder, other,
					(work) -> reactive.execute(KEY, (lock) -> Mono.fromCallable(() -> work.apply(lock))).toFuture());
			assertThat(unsafe)
				.as("rounds (of %d) in which another client's tryAcquire succeeded while the reactive "
						+ "waiter's work ran", ROUNDS)
				.isZero();
		}
	}

	/**
	 * Each round: the holder takes the key, the waiter (behind the proxy) queues for it;
	 * once the waiter's next re-check ran in Redis and its reply is held back, the holder
	 * releases (the lock is handed to the waiter's queued owner token, and the message
	 * reaches it) and the re-check times out. Inside the waiter's work (if it runs while
	 * the replies are held, or after they flow again), another client tries the key.
	 * @return the rounds in which the other client got the key while the work ran
	 */
	private int rounds(String kind, RedisNode redis, ChaosProxy proxy, RedisLockTemplate holder,
			RedisLockTemplate other, Function<Function<LockHandle, String>, CompletableFuture<String>> execute)
			throws Exception {
		TestLocks.warmUp(holder, other);
		int unsafe = 0;
		int enteredWhileHeld = 0;
		List<String> report = new ArrayList<>();
		for (int round = 0; round < ROUNDS; round++) {
			LockHandle held = holder.acquire(KEY);
			CountDownLatch entered = new CountDownLatch(1);
			CountDownLatch checked = new CountDownLatch(1);
			AtomicReference<String> inside = new AtomicReference<>();
			CompletableFuture<String> call = execute.apply((lock) -> {
				entered.countDown();
				Optional<LockHandle> taken = other.tryAcquire(KEY);
				taken.ifPresent(LockHandle::close);
				String seen = (taken.isPresent() ? "other client acquired" : "other client refused") + ", isHeld "
						+ lock.isHeld();
				inside.set(seen);
				checked.countDown();
				return seen;
			});
			assertThat(Eventually.holds(Duration.ofSeconds(5), () -> queueLength(redis) == 1))
				.as("round %d: the waiter queued", round)
				.isTrue();
			long heldBefore = proxy.heldReplies();
			proxy.holdCommandReplies();
			// the queued waiter's next re-check (at most 500 ms away) ran in Redis; its
			// reply waits in the proxy
			assertThat(Eventually.holds(Duration.ofSeconds(3), () -> proxy.heldReplies() > heldBefore))
				.as("round %d: a reply of the waiter's command connection is held back", round)
				.isTrue();
			held.close(); // hands the lock to the waiter's queued owner token
			// the re-check times out after 300 ms; the work must not run on that hand-off
			boolean early = entered.await(4 * COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			proxy.pass();
			String outcome;
			try {
				call.get(15, TimeUnit.SECONDS);
				outcome = "completed";
			}
			catch (ExecutionException ex) {
				outcome = "failed: " + ex.getCause();
			}
			if (early) {
				enteredWhileHeld++;
			}
			// a loss may end the call (and cancel reactive work) before the work's check
			// is done: wait for it
			if (entered.getCount() == 0) {
				assertThat(checked.await(10, TimeUnit.SECONDS)).as("round %d: the work's check completed", round)
					.isTrue();
			}
			if (inside.get() != null && inside.get().startsWith("other client acquired")) {
				unsafe++;
			}
			report.add(String.format("round %d: work %s while the replies were held; inside: %s; call %s", round,
					early ? "ran" : "did not run", inside.get(), outcome));
			assertThat(Eventually.holds(Duration.ofSeconds(5),
					() -> queueLength(redis) == 0 && redis.call("EXISTS", "lockstep:" + KEY).equals(0L)))
				.as("round %d: key and queue empty after the call", round)
				.isTrue();
		}
		System.out.printf(
				"%s waiter, hand-off during a timed-out re-check: %d of %d rounds entered the work while the "
						+ "replies were held, %d of %d let another client acquire during the work%n  %s%n",
				kind, enteredWhileHeld, ROUNDS, unsafe, ROUNDS, String.join("\n  ", report));
		return unsafe;
	}

	/** The waiter's client, through the proxy; command timeout 300 ms. */
	private RedisLockTemplate waiterTemplate(ChaosProxy proxy) {
		return TestLocks.builder(client(proxy.port()))
			.commandTimeout(COMMAND_TIMEOUT)
			.waitTime(Duration.ofSeconds(10))
			.build();
	}

	private RedisClient client(int port) {
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
		this.clients.add(client);
		return client;
	}

	/**
	 * The reactive template over the blocking one; the one internal entry point this
	 * class uses (the auto-configuration builds it the same way).
	 */
	private static ReactiveLockTemplate reactive(RedisLockTemplate template) {
		return ReactiveLocks.of(template);
	}

	private static long queueLength(RedisNode redis) {
		return (Long) redis.call("LLEN", QUEUE);
	}

}
