package io.lockstep.local;

import java.time.Duration;

import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link LocalLockTemplate#clear()}: the reset between tests of the JVM-local store.
 */
class LocalClearTests {

	@Test
	void clearFreesEveryKeyOfTheTemplateAndItsCopies() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().build()) {
			locks.withMinHoldTime(Duration.ofSeconds(30)).acquire("job").close();
			LockHandle order = locks.named("orders").acquire("42");
			assertThat(locks.isLocked("job")).isTrue();
			assertThat(locks.named("orders").isLocked("42")).isTrue();

			assertThat(locks.named("orders").clear()).isEqualTo(2);

			assertThat(locks.isLocked("job")).isFalse();
			assertThat(locks.named("orders").isLocked("42")).isFalse();
			assertThat(locks.tryAcquire("job")).hasValueSatisfying(LockHandle::close);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(order::close);
		}
	}

	@Test
	void fencingTokensKeepIncreasingAcrossAClear() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().build()) {
			long before;
			try (LockHandle lock = locks.acquire("order:42")) {
				before = lock.fencingToken();
			}
			assertThat(locks.clear()).isZero();
			try (LockHandle lock = locks.acquire("order:42")) {
				assertThat(lock.fencingToken()).isGreaterThan(before);
			}
		}
	}

}
