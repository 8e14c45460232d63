package io.lockstep.contract;

import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.Cluster;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

class ClusterContractTests extends LockContract {

	private List<RedisNode> masters = List.of();

	@Override
	String topology() {
		return "a 3-master Redis Cluster";
	}

	@Override
	List<RedisNode> masters() {
		return this.masters;
	}

	@Override
	List<RedisLockTemplate> templates(RedisFixture fixture, List<AutoCloseable> closer) {
		Cluster cluster = fixture.cluster(3, 0);
		this.masters = cluster.masters();
		RedisClusterClient first = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(0).port()));
		RedisClusterClient second = RedisClusterClient
			.create(RedisURI.create("127.0.0.1", cluster.masters().get(2).port()));
		closer.add(first::shutdown);
		closer.add(second::shutdown);
		RedisLockTemplate a = RedisLockTemplate.builder(first).lockDelay(DELAYED, LOCK_DELAY).build();
		RedisLockTemplate b = RedisLockTemplate.builder(second).lockDelay(DELAYED, LOCK_DELAY).build();
		closer.add(a);
		closer.add(b);
		return List.of(a, b);
	}

}
