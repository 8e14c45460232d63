package io.lockstep.internal.engine;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A wake-up channel that is always open and hears nothing: waiters only listen through
 * it. Tests extend it where they need a release listener or more.
 */
class OpenWakeUps implements WakeUps {

	@Override
	public void prepare() {
	}

	@Override
	public CompletableFuture<?> listen(String key) {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public void await(CompletableFuture<?> listening) {
	}

	@Override
	public void unlisten(String key) {
	}

	@Override
	public void onRelease(Consumer<String> listener) {
	}

	@Override
	public boolean notifies() {
		return true;
	}

	@Override
	public void close() {
	}

}
