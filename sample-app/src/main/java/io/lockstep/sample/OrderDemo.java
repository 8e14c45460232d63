package io.lockstep.sample;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.springframework.stereotype.Component;
import org.springframework.util.Assert;

/**
 * Fires many orders at once from several simulated service instances (thread pools), with
 * or without the lock, and reports what happened to the stock.
 */
@Component
public class OrderDemo {

	static final int THREADS_PER_INSTANCE = 4;

	private static final long[] BUCKETS_MILLIS = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000 };

	private final InventoryService inventory;

	private final InventoryRepository repository;

	private final AtomicReference<DemoResult> last = new AtomicReference<>();

	OrderDemo(InventoryService inventory, InventoryRepository repository) {
		this.inventory = inventory;
		this.repository = repository;
	}

	/** The latest result, or {@code null}. */
	public DemoResult last() {
		return this.last.get();
	}

	public DemoResult run(String sku, int orders, int stock, int instances, boolean locked) throws Exception {
		Assert.isTrue(orders > 0 && orders <= 2_000, "'orders' must be between 1 and 2000");
		Assert.isTrue(stock >= 0 && stock <= 100_000, "'stock' must be between 0 and 100000");
		Assert.isTrue(instances > 0 && instances <= 8, "'instances' must be between 1 and 8");
		this.inventory.restock(sku, stock);
		List<ExecutorService> pools = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			pools.add(Executors.newFixedThreadPool(THREADS_PER_INSTANCE));
		}
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Timed>> futures = new ArrayList<>();
		try {
			for (int n = 0; n < orders; n++) {
				String instance = "instance-" + (n % instances + 1);
				futures.add(pools.get(n % instances).submit(() -> {
					start.await();
					long called = System.nanoTime();
					OrderResult result = locked ? this.inventory.placeOrder(sku, 1, instance)
							: this.inventory.placeOrderWithoutLock(sku, 1, instance);
					return new Timed(result, called);
				}));
			}
			long begin = System.nanoTime();
			start.countDown();
			List<OrderResult> done = new ArrayList<>();
			List<Long> waitMicros = new ArrayList<>();
			for (Future<Timed> future : futures) {
				Timed timed = future.get(2, TimeUnit.MINUTES);
				done.add(timed.result());
				waitMicros.add((timed.result().enteredAtNanos() - timed.calledNanos()) / 1_000);
			}
			DemoResult result = summarize(sku, locked, orders, stock, instances, done, waitMicros,
					(System.nanoTime() - begin) / 1_000_000);
			this.last.set(result);
			return result;
		}
		finally {
			pools.forEach(ExecutorService::shutdownNow);
		}
	}

	private record Timed(OrderResult result, long calledNanos) {
	}

	private DemoResult summarize(String sku, boolean locked, int orders, int stock, int instances,
			List<OrderResult> done, List<Long> waitMicros, long millis) {
		int accepted = (int) done.stream().filter(OrderResult::accepted).count();
		Map<String, Integer> byInstance = new TreeMap<>();
		done.stream().filter(OrderResult::accepted).forEach((r) -> byInstance.merge(r.instance(), 1, Integer::sum));
		List<Long> sorted = new ArrayList<>(waitMicros);
		Collections.sort(sorted);
		Map<String, Integer> histogram = new java.util.LinkedHashMap<>();
		for (long bucket : BUCKETS_MILLIS) {
			histogram.put("≤" + bucket + "ms", 0);
		}
		histogram.put(">" + BUCKETS_MILLIS[BUCKETS_MILLIS.length - 1] + "ms", 0);
		for (long micros : sorted) {
			histogram.merge(bucketOf(micros), 1, Integer::sum);
		}
		int finalStock = this.repository.stock(sku);
		return new DemoResult(sku, locked, orders, instances, stock, accepted, orders - accepted, finalStock,
				Math.max(0, accepted - stock), millis, byInstance, percentile(sorted, 0.50), percentile(sorted, 0.90),
				percentile(sorted, 0.99), sorted.get(sorted.size() - 1) / 1000.0, histogram);
	}

	private static String bucketOf(long micros) {
		for (long bucket : BUCKETS_MILLIS) {
			if (micros <= bucket * 1_000) {
				return "≤" + bucket + "ms";
			}
		}
		return ">" + BUCKETS_MILLIS[BUCKETS_MILLIS.length - 1] + "ms";
	}

	private static double percentile(List<Long> sorted, double quantile) {
		int index = (int) Math.ceil(quantile * sorted.size()) - 1;
		return sorted.get(Math.max(0, index)) / 1000.0;
	}

	/**
	 * What a demo run did.
	 *
	 * @param sku the product
	 * @param locked whether orders ran under {@code @DistributedLock}
	 * @param orders orders fired
	 * @param instances simulated instances
	 * @param initialStock stock before the run
	 * @param accepted orders accepted
	 * @param rejected orders rejected for lack of stock
	 * @param finalStock stock after the run
	 * @param oversold orders accepted beyond the initial stock (lost updates)
	 * @param millis wall time of the run
	 * @param acceptedByInstance accepted orders per instance
	 * @param waitP50Millis median wait before an order ran (lock wait)
	 * @param waitP90Millis 90th percentile of that wait
	 * @param waitP99Millis 99th percentile of that wait
	 * @param waitMaxMillis longest wait
	 * @param waitHistogram orders per wait bucket
	 */
	public record DemoResult(String sku, boolean locked, int orders, int instances, int initialStock, int accepted,
			int rejected, int finalStock, int oversold, long millis, Map<String, Integer> acceptedByInstance,
			double waitP50Millis, double waitP90Millis, double waitP99Millis, double waitMaxMillis,
			Map<String, Integer> waitHistogram) {
	}

}
