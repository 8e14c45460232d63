package io.lockstep.internal.redis;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.lockstep.internal.engine.WakeUps.HandOffListener;

/**
 * Who a {@link ReleaseChannel}'s messages go to: hand-offs on the client's own channels
 * to the hand-off listener, every other message to the release listener. Both are set
 * once, when the engine is built.
 */
final class ChannelListeners {

	private volatile BiConsumer<String, String> listener = (key, message) -> {
	};

	private volatile HandOffListener handOffListener;

	void onRelease(Consumer<String> listener) {
		this.listener = (key, message) -> listener.accept(key);
	}

	void onMessage(BiConsumer<String, String> listener) {
		this.listener = listener;
	}

	void onHandOff(HandOffListener listener) {
		this.handOffListener = listener;
	}

	/**
	 * @param own whether the channel is one of the client's own hand-off channels
	 */
	void deliver(String channel, String message, boolean own) {
		HandOffListener handOff = this.handOffListener;
		if (handOff != null && own && LockScripts.isHandOff(message)) {
			LockScripts.HandOff parsed = LockScripts.readHandOff(message);
			if (parsed != null) {
				handOff.handedOff(parsed.key(), parsed.owner(), parsed.fencingToken(), parsed.leaseMillis());
			}
			return;
		}
		this.listener.accept(channel, message);
	}

}
