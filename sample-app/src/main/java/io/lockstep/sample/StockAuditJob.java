package io.lockstep.sample;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.DistributedLocks;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A job written for ShedLock, as an application that moves from ShedLock has it: only
 * ShedLock's annotations, and no {@code LockProvider} bean, as {@code lockstep-shedlock}
 * auto-configures Lockstep's. Its lock is {@code lockstep:shedlock:stock-audit}, with a
 * fencing token, shown on {@code /actuator/locks} while it runs and in
 * {@code lockstep.acquire} under {@code lock=stock-audit}. Every instance schedules it
 * once a minute; {@code lockAtLeastFor} keeps the lock 50 s after a run, so the other
 * instances skip that minute.
 */
@Component
@EnableSchedulerLock(defaultLockAtMostFor = "10m")
public class StockAuditJob {

	private static final Logger logger = LoggerFactory.getLogger(StockAuditJob.class);

	private final InventoryRepository repository;

	private final AtomicLong runs = new AtomicLong();

	private final AtomicLong lastFencingToken = new AtomicLong();

	StockAuditJob(InventoryRepository repository) {
		this.repository = repository;
	}

	@Scheduled(fixedRate = 1, initialDelay = 1, timeUnit = TimeUnit.MINUTES)
	@SchedulerLock(name = "stock-audit", lockAtMostFor = "5m", lockAtLeastFor = "50s")
	public void audit() {
		LockAssert.assertLocked();
		long token = DistributedLocks.currentFencingToken().orElseThrow();
		List<Product> products = this.repository.products();
		long units = products.stream().mapToLong(Product::stock).sum();
		this.lastFencingToken.set(token);
		this.runs.incrementAndGet();
		logger.info("Stock audit (fencing token {}): {} products, {} units in stock", token, products.size(), units);
	}

	/** How often this instance ran the audit. */
	public long runs() {
		return this.runs.get();
	}

	/** The fencing token of this instance's latest audit, or 0. */
	public long lastFencingToken() {
		return this.lastFencingToken.get();
	}

}
