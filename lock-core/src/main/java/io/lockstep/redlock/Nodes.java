package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.lettuce.core.AbstractRedisClient;
import io.lockstep.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The N masters of a Redlock and their quorum (N/2+1): sends one command to every node at
 * once, waits for the replies that decide, and says why a node did not vote.
 */
final class Nodes implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(Nodes.class);

	/**
	 * How long a command may wait for its node's first connection (a cold JVM, a node
	 * starting): Lettuce's default connect timeout.
	 */
	static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

	private final List<Node> nodes;

	private final int quorum;

	private final Duration commandTimeout;

	private final Duration nodeTimeout;

	private final ExecutorService connector;

	/**
	 * @param nodeTimeout the bound on each node's reply; at most half the command timeout
	 * (shortened to it)
	 */
	Nodes(List<String> names, List<? extends AbstractRedisClient> clients, Duration commandTimeout,
			Duration nodeTimeout) {
		this.connector = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "lockstep-redlock-connect");
			thread.setDaemon(true);
			return thread;
		});
		List<Node> nodes = new ArrayList<>();
		for (int i = 0; i < clients.size(); i++) {
			nodes.add(new Node(names.get(i), clients.get(i), commandTimeout, this.connector));
		}
		this.nodes = List.copyOf(nodes);
		this.quorum = nodes.size() / 2 + 1;
		this.commandTimeout = commandTimeout;
		Duration half = commandTimeout.dividedBy(2);
		this.nodeTimeout = (nodeTimeout.compareTo(half) < 0) ? nodeTimeout : half;
	}

	int size() {
		return this.nodes.size();
	}

	int quorum() {
		return this.quorum;
	}

	Node get(int index) {
		return this.nodes.get(index);
	}

	List<Node> all() {
		return this.nodes;
	}

	Duration commandTimeout() {
		return this.commandTimeout;
	}

	Duration nodeTimeout() {
		return this.nodeTimeout;
	}

	/**
	 * The bound on an acquire (or its undo) on a node: the node timeout once connected,
	 * else also the time to connect, so that the first lock after start-up is not refused
	 * by nodes that are still connecting. A quorum that answers sooner decides sooner.
	 */
	Duration timeout(Node node) {
		return node.isConnected() ? this.nodeTimeout : CONNECT_TIMEOUT.plus(this.nodeTimeout);
	}

	/**
	 * Starts connecting every node in the background and, with the restart rule, asks
	 * each one as soon as it answers whether it persists its data, so that a node that
	 * does not is logged at ERROR at start-up, not at the first lock.
	 */
	void connect(boolean checkPersistence) {
		for (Node node : this.nodes) {
			node.connect();
			if (checkPersistence) {
				node.checkPersistence(CONNECT_TIMEOUT.plus(this.nodeTimeout)).exceptionally((failure) -> {
					logger.debug("Could not ask Redlock node {} whether it persists its data; its first vote will: {}",
							node, failure.toString());
					return null;
				});
			}
		}
	}

	/**
	 * Asks every node whether it persists its data, each bounded by the node timeout.
	 * @throws LockException when fewer than a quorum answered that they do, naming the
	 * nodes that refused and those that did not answer
	 */
	void checkPersistence() {
		// without a quorum, every node's answer (or its timeout) goes into the message
		Votes<Boolean> votes = await(
				Votes.gather(each((node) -> node.checkPersistence(this.nodeTimeout)),
						(sofar) -> sofar.count((persists) -> persists) >= this.quorum),
				"tell whether they persist their data");
		int persisting = votes.count((persists) -> persists);
		if (persisting < this.quorum) {
			throw new LockException("Redlock cannot lock: "
					+ shortfall(votes.count((persists) -> !persists), persisting) + " (" + failures(votes) + ")");
		}
	}

	/**
	 * Why fewer than a quorum of nodes voted, e.g. "5 of 5 nodes refused: no persistence
	 * (...), a quorum is 3" or "only 2 of 5 nodes answered, a quorum is 3".
	 * @param refused the nodes that refused because they do not persist their data
	 * @param voted the nodes that answered and took part
	 */
	String shortfall(int refused, int voted) {
		if (refused == 0) {
			return "only " + voted + " of " + size() + " nodes answered, a quorum is " + this.quorum;
		}
		int silent = size() - refused - voted;
		return refused + " of " + size() + " nodes refused: no persistence (Redlock needs appendonly yes on every "
				+ "node)" + ((silent > 0) ? ", " + silent + " did not answer" : "")
				+ ((voted > 0) ? ", " + voted + " took part" : "") + ", a quorum is " + this.quorum;
	}

	/** Sends a command to every node at once; one reply per node, in node order. */
	<T> List<CompletableFuture<T>> each(Function<Node, CompletableFuture<T>> command) {
		List<CompletableFuture<T>> replies = new ArrayList<>(this.nodes.size());
		for (Node node : this.nodes) {
			replies.add(command.apply(node));
		}
		return replies;
	}

	/** Waits for gathered votes (each node's reply is bounded already). */
	<T> Votes<T> await(CompletableFuture<Votes<T>> votes, String what) {
		long bound = CONNECT_TIMEOUT.toNanos() + this.nodeTimeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
		try {
			return votes.get(bound, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new LockException("Redlock nodes did not answer within " + Duration.ofNanos(bound) + " to " + what,
					ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new LockException("Redlock failed to " + what + ": " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockException("Interrupted while waiting for Redlock nodes to " + what, ex);
		}
	}

	/** Why each node that did not vote did not: for messages. */
	String failures(Votes<?> votes) {
		List<String> reasons = new ArrayList<>();
		for (int i = 0; i < votes.size(); i++) {
			Throwable failure = votes.failure(i);
			if (failure != null) {
				String reason = String.valueOf(failure.getMessage());
				if (failure instanceof TimeoutException) {
					reason = get(i).isConnected() ? "no reply within the node timeout" : "not connected in time";
				}
				reasons.add(get(i) + ": " + reason);
			}
			else if (votes.answered(i) && ((votes.value(i) instanceof NodeVote vote && vote.refused())
					|| Boolean.FALSE.equals(votes.value(i)))) {
				reasons.add(get(i) + ": refused, it does not persist its data (aof_enabled:0; Redlock needs "
						+ "appendonly yes)");
			}
		}
		return reasons.isEmpty() ? "no node failed" : String.join("; ", reasons);
	}

	@Override
	public void close() {
		this.connector.shutdownNow();
		this.nodes.forEach(Node::close);
	}

}
