package io.lockstep.redlock;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;

/**
 * The replies of the nodes to one command sent to all of them, as far as they have come:
 * for each node a value, a failure, or nothing yet. {@link #gather} completes as soon as
 * the replies so far decide the outcome (or every node has answered or failed), so that a
 * slow or paused node does not delay a decision the others already made.
 *
 * @param <T> the reply of one node
 */
final class Votes<T> {

	private final Object[] values;

	private final Throwable[] failures;

	private final boolean[] done;

	private final int pending;

	private Votes(Object[] values, Throwable[] failures, boolean[] done, int pending) {
		this.values = values;
		this.failures = failures;
		this.done = done;
		this.pending = pending;
	}

	/**
	 * Collects the replies (one future per node, each bounded by its own timeout) until
	 * {@code decided} holds for the replies so far, or every one has completed.
	 */
	static <T> CompletableFuture<Votes<T>> gather(List<CompletableFuture<T>> replies, Predicate<Votes<T>> decided) {
		int size = replies.size();
		CompletableFuture<Votes<T>> result = new CompletableFuture<>();
		Object[] values = new Object[size];
		Throwable[] failures = new Throwable[size];
		boolean[] done = new boolean[size];
		int[] pending = { size };
		for (int i = 0; i < size; i++) {
			int node = i;
			replies.get(i).whenComplete((value, failure) -> {
				Votes<T> votes;
				synchronized (values) {
					values[node] = value;
					failures[node] = (failure != null) ? unwrap(failure) : null;
					done[node] = true;
					pending[0]--;
					if (result.isDone()) {
						return;
					}
					votes = new Votes<>(values.clone(), failures.clone(), done.clone(), pending[0]);
					if (pending[0] > 0 && !decided.test(votes)) {
						return;
					}
				}
				result.complete(votes);
			});
		}
		return result;
	}

	int size() {
		return this.values.length;
	}

	/** The nodes that have neither answered nor failed yet. */
	int pending() {
		return this.pending;
	}

	/** Whether the node answered (without failing). */
	boolean answered(int node) {
		return this.done[node] && this.failures[node] == null;
	}

	@SuppressWarnings("unchecked")
	T value(int node) {
		return (T) this.values[node];
	}

	/** The node's failure, or {@code null}. */
	Throwable failure(int node) {
		return this.failures[node];
	}

	/** The nodes that answered with a value matching the condition. */
	int count(Predicate<T> condition) {
		int count = 0;
		for (int i = 0; i < this.values.length; i++) {
			if (answered(i) && condition.test(value(i))) {
				count++;
			}
		}
		return count;
	}

	/**
	 * The {@code rank}-th largest of the values (1 = the largest), or {@code fallback}
	 * when there are fewer.
	 */
	static long largest(long[] values, int rank, long fallback) {
		if (values.length < rank) {
			return fallback;
		}
		long[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length - rank];
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable current = failure;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

}
