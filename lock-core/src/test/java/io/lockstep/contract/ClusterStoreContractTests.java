package io.lockstep.contract;

import java.time.Duration;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.Storage;
import io.lockstep.internal.redis.ClusterLayout;
import io.lockstep.internal.redis.RedisStore;
import io.lockstep.test.Cluster;
import io.lockstep.test.RedisFixture;

/**
 * The {@link LockStoreContract store contract} on the Redis store of a real 3-master
 * Redis Cluster: the keys of a multi-key lock land in different slots.
 */
class ClusterStoreContractTests extends LockStoreContract {

	private String server = "";

	@Override
	protected LockStore start(RedisFixture fixture) {
		Cluster cluster = fixture.cluster(3, 0);
		this.server = cluster.masters().get(0).server();
		RedisClusterClient client = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(0).port()));
		this.closer.add(client::shutdown);
		Storage storage = RedisStore.create(client, Duration.ofSeconds(2), new ClusterLayout(KEY_PREFIX), 0,
				Duration.ZERO);
		this.closer.add(storage.wakeUps());
		return storage.store();
	}

	@Override
	protected String describe() {
		return "the Redis store on a 3-master Cluster (" + this.server + ")";
	}

}
