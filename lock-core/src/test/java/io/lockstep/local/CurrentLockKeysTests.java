package io.lockstep.local;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockstep.DistributedLocks;
import io.lockstep.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DistributedLocks#currentLockKeys()}: the keys of the current call's locks, as
 * the locks name them.
 */
class CurrentLockKeysTests {

	@Test
	void listsTheKeysHeldByTheCurrentCallOutermostFirstWithoutTheKeyPrefix() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().keyPrefix("shop:").build()) {
			assertThat(DistributedLocks.currentLockKeys()).isEmpty();
			List<String> inside = locks.named("orders")
				.execute("42", (outer) -> locks.executeAll(List.of("sku-2", "sku-1", "orders:42"),
						(inner) -> DistributedLocks.currentLockKeys()));
			assertThat(inside).containsExactly("orders:42", "sku-1", "sku-2");
			assertThat(DistributedLocks.currentLockKeys()).isEmpty();
		}
	}

	@Test
	void aHandleClosedOrHeldOnAnotherThreadIsNotListed() throws Exception {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().build()) {
			LockHandle held = locks.acquire("report");
			assertThat(DistributedLocks.currentLockKeys()).containsExactly("report");
			assertThat(CompletableFuture.supplyAsync(DistributedLocks::currentLockKeys).get(5, TimeUnit.SECONDS))
				.isEmpty();
			held.close();
			assertThat(DistributedLocks.currentLockKeys()).isEmpty();
		}
	}

}
