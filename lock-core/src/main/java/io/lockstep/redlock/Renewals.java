package io.lockstep.redlock;

import org.jspecify.annotations.Nullable;

/**
 * The quorum rule of a batch of renewals, from each node's grant per renewal (ms
 * {@code > 0}, {@code 0} gone or another owner's, {@code -1} capped by max-hold).
 */
final class Renewals {

	private Renewals() {
	}

	/**
	 * Whether the replies so far decide every renewal: a quorum renewed it, so many nodes
	 * lost it that no quorum holds it, or not even the nodes still to answer could make a
	 * quorum.
	 */
	static boolean decided(Votes<long[]> votes, int renewals, int quorum) {
		for (int i = 0; i < renewals; i++) {
			int renewed = count(votes, i, 1);
			int capped = count(votes, i, -1);
			int gone = count(votes, i, 0);
			if (renewed < quorum && gone <= votes.size() - quorum && renewed + capped + votes.pending() >= quorum) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Per renewal: the lease a quorum granted at least (the quorum-th largest grant), 0
	 * when no quorum can hold the lock any more, -1 when a quorum holds it at its
	 * max-hold cap; {@code null} when some renewal could not be decided (too few nodes
	 * answered).
	 */
	static long @Nullable [] outcome(Votes<long[]> votes, int renewals, int quorum) {
		long[] granted = new long[renewals];
		for (int i = 0; i < renewals; i++) {
			int renewed = count(votes, i, 1);
			if (renewed >= quorum) {
				long[] grants = new long[renewed];
				int next = 0;
				for (int node = 0; node < votes.size(); node++) {
					if (votes.answered(node) && votes.value(node)[i] > 0) {
						grants[next++] = votes.value(node)[i];
					}
				}
				granted[i] = Votes.largest(grants, quorum, 0);
			}
			else if (count(votes, i, 0) > votes.size() - quorum) {
				granted[i] = 0;
			}
			else if (renewed + count(votes, i, -1) >= quorum) {
				granted[i] = -1;
			}
			else {
				return null;
			}
		}
		return granted;
	}

	/** The nodes whose grant for renewal {@code i} has the sign {@code signum}. */
	private static int count(Votes<long[]> votes, int i, int signum) {
		return votes.count((grants) -> Long.signum(grants[i]) == signum);
	}

}
