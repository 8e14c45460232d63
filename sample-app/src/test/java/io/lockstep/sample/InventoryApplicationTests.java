package io.lockstep.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.Eventually;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The sample application end to end over HTTP, against a real redis-server process.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "lockstep.lease-time=3s", "sample.report-interval=1h", "sample.report-initial-delay=1h",
				"sample.report-min-hold=1s", "sample.processing-time=5ms" })
class InventoryApplicationTests extends RealRedis {

	private final ExecutorService otherInstance = Executors.newSingleThreadExecutor();

	@LocalServerPort
	private int port;

	@Autowired
	private LockTemplate locks;

	@Autowired
	private StockReportJob reportJob;

	@AfterEach
	void stopOtherInstance() {
		this.otherInstance.shutdownNow();
	}

	private RestClient http() {
		return RestClient.builder()
			.baseUrl("http://127.0.0.1:" + this.port)
			.defaultStatusHandler(HttpStatusCode::isError, (request, response) -> {
			})
			.build();
	}

	private Map<String, Object> post(String uri) {
		return http().post().uri(uri).retrieve().body(new ParameterizedTypeReference<>() {
		});
	}

	private Map<String, Object> get(String uri) {
		return http().get().uri(uri).retrieve().body(new ParameterizedTypeReference<>() {
		});
	}

	@Test
	void twoHundredConcurrentOrdersUnderTheLockSellExactlyTheStock() {
		Map<String, Object> result = post("/api/demo?sku=lamp&orders=200&stock=50&instances=4&locked=true");
		System.out.printf("locked demo: %s%n", result);
		assertThat(result).containsEntry("accepted", 50)
			.containsEntry("rejected", 150)
			.containsEntry("finalStock", 0)
			.containsEntry("oversold", 0);
		Map<String, Object> summary = get("/api/summary?sku=lamp");
		assertThat(summary).containsEntry("stock", 0);
		assertThat(summary.get("orders")).isEqualTo(Map.of("ACCEPTED", 50, "REJECTED", 150));
	}

	@Test
	void theSameOrdersWithoutTheLockOversell() {
		Map<String, Object> result = post("/api/demo?sku=chair&orders=200&stock=50&instances=4&locked=false");
		System.out.printf("unlocked demo: %s%n", result);
		assertThat((Integer) result.get("oversold")).isPositive();
		assertThat((Integer) result.get("accepted")).isGreaterThan(50);
	}

	@Test
	void metricsShowAcquisitionOutcomesIncludingTimeouts() throws Exception {
		post("/api/demo?sku=mug&orders=5&stock=5&instances=1&locked=true");
		AutoCloseable holder = holdElsewhere(this.locks.named("stock"), "mug");
		try {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.locks.named("stock").withWaitTime(Duration.ofMillis(50)).acquire("mug"));
			assertThat(this.locks.named("stock").tryAcquire("mug")).isEmpty();
			Map<String, Object> endpoint = get("/actuator/locks");
			System.out.printf("/actuator/locks: %s%n", endpoint);
			@SuppressWarnings("unchecked")
			List<Map<String, Object>> listed = (List<Map<String, Object>>) endpoint.get("locks");
			assertThat(listed).anySatisfy((lock) -> {
				assertThat(lock).containsEntry("key", "lockstep:stock:mug").containsEntry("lockName", "stock");
				assertThat(((Number) lock.get("fencingToken")).longValue()).isPositive();
				assertThat(lock.get("leaseRemaining")).asString().matches("\\d+ms|\\d+(\\.\\d{1,3})?s");
			});
			Map<String, Object> byKey = get("/actuator/locks/stock:mug");
			System.out.printf("/actuator/locks/stock:mug: %s%n", byKey);
			assertThat(byKey).containsEntry("key", "lockstep:stock:mug").containsEntry("locked", true);
			assertThat(byKey.get("leaseRemaining")).asString().matches("\\d+ms|\\d+(\\.\\d{1,3})?s");
			assertThat(get("/actuator/locks/lockstep:stock:mug")).containsEntry("locked", true);
		}
		finally {
			holder.close();
		}
		assertThat(get("/actuator/locks/stock:mug")).containsEntry("locked", false);

		Map<String, Object> metric = get("/actuator/metrics/lockstep.acquire");
		System.out.printf("/actuator/metrics/lockstep.acquire: %s%n", metric);
		assertThat(metric.get("availableTags").toString()).contains("tag=outcome")
			.contains("acquired")
			.contains("timeout")
			.contains("skipped")
			.contains("tag=lock")
			.contains("stock");
		String prometheus = http().get().uri("/actuator/prometheus").retrieve().body(String.class);
		assertThat(prometheus).contains("lockstep_acquire_seconds").contains("lockstep_held_seconds");
		assertThat(prometheus.lines().filter((line) -> line.startsWith("lockstep_")))
			.noneMatch((line) -> line.contains("mug"));
	}

	@Test
	void healthGoesDownWhileRenewalsFailAndUpAgainAfter() {
		try (LockHandle lock = this.locks.acquire("health-probe")) {
			assertThat(lockstepHealth()).isEqualTo("UP");
			redis.pause();
			String whilePaused;
			try {
				whilePaused = awaitHealth("DOWN", Duration.ofSeconds(5));
			}
			finally {
				redis.resume();
			}
			String afterResume = awaitHealth("UP", Duration.ofSeconds(5));
			System.out.printf("lockstep health: UP, %s while Redis was stopped, %s after%n", whilePaused, afterResume);
			assertThat(whilePaused).isEqualTo("DOWN");
			assertThat(afterResume).isEqualTo("UP");
			assertThat(lock.isHeld()).isTrue();
		}
	}

	@Test
	void theScheduledReportSkipsForItsMinimumHoldAndWhileAnotherInstanceRunsIt() throws Exception {
		long before = this.reportJob.runs();
		this.reportJob.report();
		assertThat(this.reportJob.runs()).isEqualTo(before + 1);
		assertThat(this.locks.isLocked("stock-report")).as("kept for the minimum hold after the run").isTrue();
		this.reportJob.report();
		assertThat(this.reportJob.runs()).as("skipped within the minimum hold").isEqualTo(before + 1);
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.locks.isLocked("stock-report"));
		assertThat(this.locks.isLocked("stock-report")).as("expired after the minimum hold of 1s").isFalse();
		try (AutoCloseable otherInstance = holdElsewhere(this.locks, "stock-report")) {
			this.reportJob.report();
		}
		assertThat(this.reportJob.runs()).as("skipped while held elsewhere").isEqualTo(before + 1);
	}

	/**
	 * Holds the lock on a thread of its own (as another instance would) until the
	 * returned handle is closed. Not the common pool: it may have a single worker on a
	 * 2-core machine.
	 */
	private AutoCloseable holdElsewhere(LockTemplate template, String key) throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
			try (LockHandle lock = template.acquire(key)) {
				held.countDown();
				done.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}, this.otherInstance);
		assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
		return () -> {
			done.countDown();
			holder.get(10, TimeUnit.SECONDS);
		};
	}

	private String lockstepHealth() {
		Object status = get("/actuator/health/lockstep").get("status");
		return String.valueOf(status);
	}

	private String awaitHealth(String expected, Duration timeout) {
		Eventually.holds(timeout, () -> lockstepHealth().equals(expected));
		return lockstepHealth();
	}

}
