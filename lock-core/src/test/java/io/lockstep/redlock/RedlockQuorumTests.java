package io.lockstep.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The quorum rule of renewals on 5 nodes (quorum 3), on made-up replies: a node's grant
 * in ms, 0 for a key gone, -1 at the max-hold cap, {@code null} for a node that failed.
 */
class RedlockQuorumTests {

	@Test
	void aRenewalIsGrantedTheSmallestLeaseOfTheQuorum() {
		assertThat(outcome(1000L, 900L, 800L, 0L, null)).containsExactly(800);
		assertThat(outcome(1000L, 1000L, 1000L, 1000L, 1000L)).containsExactly(1000);
	}

	@Test
	void aRenewalThatNoQuorumConfirmsIsNotDecided() {
		assertThat(outcome(1000L, 900L, 0L, 0L, null)).isNull();
		assertThat(outcome(1000L, 900L, null, null, null)).isNull();
	}

	@Test
	void aRenewalIsLostWhenSoManyNodesLostTheKeyThatNoQuorumHoldsIt() {
		assertThat(outcome(0L, 0L, 0L, 1000L, 1000L)).containsExactly(0);
		assertThat(outcome(0L, 0L, 0L, null, null)).containsExactly(0);
	}

	@Test
	void aRenewalAtTheCapOfAQuorumGetsNoExtension() {
		assertThat(outcome(-1L, -1L, 500L, null, null)).containsExactly(-1);
	}

	@Test
	void theRepliesSoFarDecideAsSoonAsAQuorumRenewed() {
		List<CompletableFuture<long[]>> replies = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			replies.add(new CompletableFuture<>());
		}
		CompletableFuture<Votes<long[]>> votes = Votes.gather(replies, (sofar) -> Renewals.decided(sofar, 1, 3));
		replies.get(0).complete(new long[] { 1000 });
		replies.get(3).complete(new long[] { 700 });
		assertThat(votes).isNotDone();
		replies.get(4).complete(new long[] { 900 });
		assertThat(votes).isDone();
		assertThat(Renewals.outcome(votes.join(), 1, 3)).containsExactly(700);
	}

	private static long[] outcome(Long... grants) {
		List<CompletableFuture<long[]>> replies = new ArrayList<>();
		for (Long grant : grants) {
			replies.add((grant != null) ? CompletableFuture.completedFuture(new long[] { grant })
					: CompletableFuture.failedFuture(new TimeoutException()));
		}
		return Renewals.outcome(Votes.gather(replies, (sofar) -> false).join(), 1, 3);
	}

}
