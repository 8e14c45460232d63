package io.lockstep.test.starter;

import java.util.function.Consumer;

import org.springframework.stereotype.Component;

/**
 * A collaborator of {@link OrderService}; tests look at the locks held when it is called.
 */
@Component
public class Stock {

	private volatile Consumer<String> check = (orderId) -> {
	};

	public void deduct(String orderId) {
		this.check.accept(orderId);
	}

	/** Runs {@code check} in every later call; for tests. */
	public void onDeduct(Consumer<String> check) {
		this.check = check;
	}

}
