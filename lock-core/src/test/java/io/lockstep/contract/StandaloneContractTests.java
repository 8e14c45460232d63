package io.lockstep.contract;

import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

class StandaloneContractTests extends LockContract {

	private List<RedisNode> masters = List.of();

	@Override
	String topology() {
		return "one standalone master";
	}

	@Override
	List<RedisNode> masters() {
		return this.masters;
	}

	@Override
	List<RedisLockTemplate> templates(RedisFixture fixture, List<AutoCloseable> closer) {
		RedisNode redis = fixture.standalone();
		this.masters = List.of(redis);
		RedisClient first = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		RedisClient second = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		closer.add(first::shutdown);
		closer.add(second::shutdown);
		RedisLockTemplate a = RedisLockTemplate.builder(first).lockDelay(DELAYED, LOCK_DELAY).build();
		RedisLockTemplate b = RedisLockTemplate.builder(second).lockDelay(DELAYED, LOCK_DELAY).build();
		closer.add(a);
		closer.add(b);
		return List.of(a, b);
	}

}
