package io.lockstep.contract;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisURI;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redlock.Redlock;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;

class RedlockContractTests extends LockContract {

	private List<RedisNode> masters = List.of();

	@Override
	String topology() {
		return "Redlock on 5 independent masters";
	}

	@Override
	List<RedisNode> masters() {
		return this.masters;
	}

	@Override
	List<RedisLockTemplate> templates(RedisFixture fixture, List<AutoCloseable> closer) {
		List<RedisNode> masters = fixture.masters(5, "--appendonly", "yes");
		this.masters = masters;
		List<RedisURI> uris = masters.stream().map((node) -> RedisURI.create(node.host(), node.port())).toList();
		// a node timeout with margins for a busy machine: a quorum that does not answer
		// in
		// time fails the call (it is not retried)
		RedisLockTemplate a = Redlock.nodes(uris)
			.nodeTimeout(Duration.ofMillis(500))
			.builder()
			.lockDelay(DELAYED, LOCK_DELAY)
			.build();
		RedisLockTemplate b = Redlock.nodes(uris)
			.nodeTimeout(Duration.ofMillis(500))
			.builder()
			.lockDelay(DELAYED, LOCK_DELAY)
			.build();
		closer.add(a);
		closer.add(b);
		return List.of(a, b);
	}

}
