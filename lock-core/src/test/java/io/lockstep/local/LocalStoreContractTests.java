package io.lockstep.local;

import io.lockstep.contract.LockStoreContract;
import io.lockstep.internal.engine.LockStore;
import io.lockstep.test.RedisFixture;

/**
 * The {@link LockStoreContract store contract} on the JVM-local {@link LocalStore}.
 */
class LocalStoreContractTests extends LockStoreContract {

	@Override
	protected LockStore start(RedisFixture fixture) {
		return new LocalStore((key) -> {
		});
	}

	@Override
	protected String describe() {
		return "the JVM-local store";
	}

}
