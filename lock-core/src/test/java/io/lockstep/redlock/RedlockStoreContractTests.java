package io.lockstep.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lockstep.contract.LockStoreContract;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

/**
 * The {@link LockStoreContract store contract} on {@link RedlockStore} over 3 independent
 * masters that persist (real redis-servers): its exclusive part (Redlock neither hands
 * off nor shares).
 */
class RedlockStoreContractTests extends LockStoreContract {

	private String server = "";

	@Override
	protected LockStore start(RedisFixture fixture) {
		List<RedisNode> nodes = RedlockNodes.persistent(fixture, 3);
		this.server = nodes.get(0).server();
		List<RedisClient> clients = new ArrayList<>();
		List<String> names = new ArrayList<>();
		for (RedisNode node : nodes) {
			RedisClient client = RedisClient.create(RedlockNodes.uris(List.of(node)).get(0));
			this.closer.add(client::shutdown);
			clients.add(client);
			names.add("node " + (clients.size()) + " of 3");
		}
		// a node timeout with margins for a busy machine
		RedlockSettings settings = new RedlockSettings(0.01, Duration.ofMillis(500), true);
		RedlockStore store = new RedlockStore(names, clients, Duration.ofSeconds(2), KEY_PREFIX, settings, () -> {
		});
		this.closer.add(store.wakeUps());
		return store;
	}

	@Override
	protected String describe() {
		return "Redlock on 3 masters (" + this.server + ")";
	}

}
