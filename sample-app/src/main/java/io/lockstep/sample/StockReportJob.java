package io.lockstep.sample;

import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.DistributedLock;
import io.lockstep.OnLocked;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A scheduled report that must run on one instance per interval: every instance schedules
 * it, the ones that find the lock taken skip the run at once, and the lock stays taken
 * for the report's minimum hold (a little shorter than the interval) even though the
 * report itself takes milliseconds, so that an instance whose schedule ticks a little
 * later does not run it again. The durations are {@code sample.report-interval},
 * {@code sample.report-initial-delay} and {@code sample.report-min-hold}
 * ({@link SampleProperties}, whose defaults the placeholders repeat).
 */
@Component
public class StockReportJob {

	private static final Logger logger = LoggerFactory.getLogger(StockReportJob.class);

	private final InventoryRepository repository;

	private final AtomicLong runs = new AtomicLong();

	StockReportJob(InventoryRepository repository) {
		this.repository = repository;
	}

	@Scheduled(fixedRateString = "${sample.report-interval:30s}",
			initialDelayString = "${sample.report-initial-delay:5s}")
	@DistributedLock(key = "'stock-report'", minHoldTime = "${sample.report-min-hold:25s}", onLocked = OnLocked.SKIP)
	public void report() {
		this.runs.incrementAndGet();
		this.repository.products()
			.stream()
			.filter((product) -> product.stock() < 10)
			.forEach((product) -> logger.info("Low stock: {} has {} left", product.sku(), product.stock()));
	}

	/** How often this instance ran the report. */
	public long runs() {
		return this.runs.get();
	}

}
