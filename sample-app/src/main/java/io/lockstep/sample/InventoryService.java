package io.lockstep.sample;

import java.time.Duration;

import io.lockstep.DistributedLock;
import io.lockstep.DistributedLocks;
import io.lockstep.LockMode;
import io.lockstep.LockTemplate;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Deducts stock for orders. The deduction reads the stock, spends a moment (checking
 * payment, say), then writes the new stock: without a lock, two instances read the same
 * stock and one update is lost, so more orders are accepted than there was stock.
 */
@Service
public class InventoryService {

	private final InventoryRepository repository;

	private final LockTemplate locks;

	private final Duration processingTime;

	InventoryService(InventoryRepository repository, LockTemplate locks, SampleProperties properties) {
		this.repository = repository;
		this.locks = locks;
		this.processingTime = properties.getProcessingTime();
	}

	/**
	 * Places an order under the lock of its product. The lock advice runs outside the
	 * transaction, so the lock is released only after the commit.
	 */
	@DistributedLock(key = "#sku", name = "stock")
	@Transactional
	public OrderResult placeOrder(String sku, int quantity, String instance) {
		long entered = System.nanoTime();
		return deduct(sku, quantity, instance, DistributedLocks.currentFencingToken().orElse(-1), entered);
	}

	/**
	 * Reads a product's stock under the read lock of its product: readers of one product
	 * run side by side, and never while an order (the write lock of the same key) changes
	 * it.
	 */
	@DistributedLock(key = "#sku", name = "stock", mode = LockMode.READ)
	public int stockLevel(String sku) {
		return this.repository.stock(sku);
	}

	/** The same deduction with no lock: it oversells under concurrency. */
	@Transactional
	public OrderResult placeOrderWithoutLock(String sku, int quantity, String instance) {
		return deduct(sku, quantity, instance, -1, System.nanoTime());
	}

	/**
	 * Sets the stock and forgets the product's orders, under the same lock as the orders.
	 */
	public void restock(String sku, int stock) {
		this.locks.named("stock").execute(sku, (lock) -> {
			this.repository.stock(sku);
			this.repository.setStock(sku, stock);
			this.repository.deleteOrders(sku);
			return null;
		});
	}

	private OrderResult deduct(String sku, int quantity, String instance, long fencingToken, long entered) {
		int stock = this.repository.stock(sku);
		pause();
		if (stock < quantity) {
			this.repository.addOrder(sku, quantity, "REJECTED", instance, fencingToken);
			return new OrderResult(sku, quantity, false, stock, instance, fencingToken, entered);
		}
		this.repository.setStock(sku, stock - quantity);
		this.repository.addOrder(sku, quantity, "ACCEPTED", instance, fencingToken);
		return new OrderResult(sku, quantity, true, stock - quantity, instance, fencingToken, entered);
	}

	private void pause() {
		try {
			Thread.sleep(this.processingTime.toMillis(), (int) (this.processingTime.toNanos() % 1_000_000));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while processing an order", ex);
		}
	}

}
