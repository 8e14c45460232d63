package io.lockstep.contract;

import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.Sentinels;

class SentinelContractTests extends LockContract {

	private List<RedisNode> masters = List.of();

	@Override
	String topology() {
		return "master + replica + 3 sentinels";
	}

	@Override
	List<RedisNode> masters() {
		return this.masters;
	}

	@Override
	List<RedisLockTemplate> templates(RedisFixture fixture, List<AutoCloseable> closer) {
		Sentinels sentinels = fixture.sentinels(1, 3);
		this.masters = List.of(sentinels.master());
		RedisURI.Builder uri = RedisURI.builder();
		for (RedisNode sentinel : sentinels.sentinels()) {
			uri.withSentinel(sentinel.host(), sentinel.port());
		}
		RedisURI master = uri.withSentinelMasterId(Sentinels.MASTER_NAME).build();
		RedisClient first = RedisClient.create(master);
		RedisClient second = RedisClient.create(master);
		closer.add(first::shutdown);
		closer.add(second::shutdown);
		RedisLockTemplate a = RedisLockTemplate.builder(first).lockDelay(DELAYED, LOCK_DELAY).build();
		RedisLockTemplate b = RedisLockTemplate.builder(second).lockDelay(DELAYED, LOCK_DELAY).build();
		closer.add(a);
		closer.add(b);
		return List.of(a, b);
	}

}
