package io.lockstep.contract;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.internal.engine.Storage;
import io.lockstep.internal.redis.KeyLayout;
import io.lockstep.internal.redis.RedisStore;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

/**
 * The {@link LockStoreContract store contract} on the Redis store of a single master (a
 * real redis-server).
 */
class RedisStoreContractTests extends LockStoreContract {

	private String server = "";

	@Override
	protected LockStore start(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		this.server = redis.server();
		RedisClient client = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.closer.add(client::shutdown);
		Storage storage = RedisStore.create(client, Duration.ofSeconds(2), KeyLayout.singleMaster(KEY_PREFIX), 0,
				Duration.ZERO);
		this.closer.add(storage.wakeUps());
		return storage.store();
	}

	@Override
	protected String describe() {
		return "the Redis store on a single master (" + this.server + ")";
	}

}
