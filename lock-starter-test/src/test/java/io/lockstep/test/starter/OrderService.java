package io.lockstep.test.starter;

import io.lockstep.DistributedLock;
import io.lockstep.OnLocked;

import org.springframework.stereotype.Service;

/** Locked and unlocked methods of the test application. */
@Service
public class OrderService {

	private final Stock stock;

	OrderService(Stock stock) {
		this.stock = stock;
	}

	/** Locked on {@code orders:<orderId>}. */
	@DistributedLock(key = "#orderId", name = "orders")
	public String place(String orderId) {
		this.stock.deduct(orderId);
		return "placed " + orderId;
	}

	/** Not locked. */
	public String browse(String orderId) {
		this.stock.deduct(orderId);
		return "browsed " + orderId;
	}

	/**
	 * Calls {@link #place} from inside the bean: the proxy, and the lock, are bypassed.
	 */
	public String placeFromInside(String orderId) {
		return place(orderId);
	}

	/**
	 * A scheduled-job style method: the lock stays taken 30s after each run, so a second
	 * run within 30s is skipped ({@code null}).
	 */
	@DistributedLock(key = "'stock-report'", minHoldTime = "30s", onLocked = OnLocked.SKIP)
	public Boolean report() {
		return Boolean.TRUE;
	}

}
