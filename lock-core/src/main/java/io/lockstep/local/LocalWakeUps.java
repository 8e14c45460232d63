package io.lockstep.local;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.lockstep.internal.engine.WakeUps;

/**
 * The JVM-local wake-up channel: a {@link LocalStore} tells every release here, in
 * process, so notifications always flow and nothing needs subscribing.
 */
final class LocalWakeUps implements WakeUps {

	private volatile Consumer<String> listener = (key) -> {
	};

	/** Tells the listener a key was released. */
	void released(String key) {
		this.listener.accept(key);
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.listener = listener;
	}

	@Override
	public void prepare() {
	}

	@Override
	public CompletableFuture<?> listen(String key) {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public void unlisten(String key) {
	}

	@Override
	public void await(CompletableFuture<?> listening) {
	}

	@Override
	public boolean notifies() {
		return true;
	}

	@Override
	public void close() {
	}

}
