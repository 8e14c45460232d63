package io.lockstep.internal.redis;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.lockstep.LockException;
import io.lockstep.internal.engine.WakeUps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wake-up channel of a {@link RedisStore}: release notifications on each key's
 * channel (its stored key) and hand-offs on the client's own channels, over one
 * {@link PubSubChannel}; sharded on a Redis 7 Cluster.
 */
final class RedisWakeUps implements WakeUps {

	private static final Logger logger = LoggerFactory.getLogger(RedisWakeUps.class);

	private final PubSubChannel channel;

	private final KeyLayout layout;

	private final Publishing publishing;

	private final String clientId;

	RedisWakeUps(PubSubChannel channel, KeyLayout layout, Publishing publishing, String clientId) {
		this.channel = channel;
		this.layout = layout;
		this.publishing = publishing;
		this.clientId = clientId;
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.channel.onMessage((stored, message) -> listener.accept(this.layout.logical(stored)));
	}

	@Override
	public void onHandOff(HandOffListener listener) {
		this.channel.onHandOff((stored, owner, fencingToken, leaseMillis) -> listener
			.handedOff(this.layout.logical(stored), owner, fencingToken, leaseMillis));
	}

	/** Decides how to subscribe (a Cluster asks the server's version), then connects. */
	@Override
	public void prepare() {
		try {
			this.publishing.command();
		}
		catch (LockException ex) {
			logger.debug("Could not ask Redis for its version yet: {}", ex.getMessage());
			return;
		}
		this.channel.prepare();
	}

	/** Nothing until it is known how to subscribe: waiters re-check meanwhile. */
	@Override
	public CompletableFuture<?> listen(String key) {
		return (this.publishing.known() != null) ? this.channel.subscribe(this.layout.stored(key))
				: CompletableFuture.completedFuture(null);
	}

	@Override
	public void unlisten(String key) {
		this.channel.unsubscribe(this.layout.stored(key));
	}

	@Override
	public void await(CompletableFuture<?> listening) {
		this.channel.await(listening);
	}

	@Override
	public boolean notifies() {
		return this.channel.notifies();
	}

	@Override
	public CompletableFuture<?> listenForHandOffs(String key) {
		return (this.publishing.known() != null)
				? this.channel.subscribeOwn(this.layout.handOffChannel(key, this.clientId))
				: CompletableFuture.completedFuture(null);
	}

	@Override
	public boolean hearsHandOffs(String key) {
		return this.publishing.known() != null && this.channel.hearsOwn(this.layout.handOffChannel(key, this.clientId));
	}

	@Override
	public void close() {
		this.channel.close();
	}

}
