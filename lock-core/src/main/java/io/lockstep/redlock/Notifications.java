package io.lockstep.redlock;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.lockstep.internal.engine.WakeUps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Release notifications across the nodes: a waiter's engine subscribes to the key on
 * every node, and a release publishes the same release id on every node where it deleted
 * the key. The engine is told of a release twice at most, whatever the number of nodes:
 * at its first message (the lock may be free already) and at its quorum-th one (a quorum
 * of nodes has let it go by then). Messages are hints: waiters also re-check on their
 * own.
 */
final class Notifications implements WakeUps {

	private static final Logger logger = LoggerFactory.getLogger(Notifications.class);

	private static final String RELEASE_ID_PREFIX = "release:";

	private final Nodes nodes;

	/** Per key with local waiters: the latest release heard and how many nodes told. */
	private final Map<String, Heard> heard = new ConcurrentHashMap<>();

	Notifications(Nodes nodes) {
		this.nodes = nodes;
	}

	/** A fresh release id, published by every node that deletes a key of the release. */
	static String releaseId() {
		return RELEASE_ID_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong());
	}

	/**
	 * Opens the notification connections; waits until a quorum is open, at most the
	 * timeout.
	 */
	@Override
	public void prepare() {
		List<CompletableFuture<Void>> preparing = this.nodes.each(Node::prepareListening);
		try {
			Votes.gather(preparing, (sofar) -> open() >= this.nodes.quorum())
				.get(this.nodes.commandTimeout().toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("Redlock notification connections not ready: {}", ex.getMessage());
		}
	}

	private int open() {
		return (int) this.nodes.all().stream().filter((node) -> node.channel().isConnected()).count();
	}

	/**
	 * Subscribes on every node; completes once a quorum subscribed (a quorum shares a
	 * node with the holder's, where its release publishes) or every node answered.
	 */
	@Override
	public CompletableFuture<?> listen(String key) {
		return Votes.gather(this.nodes.each((node) -> node.listen(key)),
				(sofar) -> sofar.count((ok) -> true) >= this.nodes.quorum());
	}

	@Override
	public void await(CompletableFuture<?> listening) {
		try {
			listening.get(this.nodes.commandTimeout().toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("Redlock subscriptions incomplete; waiters re-check periodically: {}", ex.getMessage());
		}
	}

	@Override
	public void unlisten(String key) {
		this.nodes.all().forEach((node) -> node.channel().unsubscribe(key));
		this.heard.remove(key);
	}

	@Override
	public void onRelease(Consumer<String> listener) {
		this.nodes.all().forEach((node) -> node.channel().onMessage((key, message) -> {
			if (tells(key, message)) {
				listener.accept(key);
			}
		}));
	}

	/** Whether this message is the first or the quorum-th of its release. */
	private boolean tells(String key, String message) {
		if (!message.startsWith(RELEASE_ID_PREFIX)) {
			return true;
		}
		Heard now = this.heard.compute(key, (k, before) -> (before != null && before.release().equals(message))
				? new Heard(message, before.count() + 1) : new Heard(message, 1));
		return now.count() == 1 || now.count() == this.nodes.quorum();
	}

	@Override
	public boolean notifies() {
		return this.nodes.all().stream().anyMatch((node) -> node.channel().notifies());
	}

	private record Heard(String release, int count) {
	}

	/** Nothing of its own: the nodes' connections close with the store. */
	@Override
	public void close() {
	}

}
