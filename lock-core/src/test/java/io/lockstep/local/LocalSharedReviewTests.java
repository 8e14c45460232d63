package io.lockstep.local;

import java.time.Duration;

import io.lockstep.LockHandle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README: "JVM-local locks (lockstep.enabled=false) have both" read/write locks and
 * semaphores.
 */
class LocalSharedReviewTests {

	@Test
	void jvmLocalTemplatesHaveReadLocksAndSemaphores() {
		try (LocalLockTemplate locks = LocalLockTemplate.builder().waitTime(Duration.ofMillis(200)).build()) {
			try (LockHandle first = locks.read().acquire("doc:l1");
					LockHandle second = locks.read().acquire("doc:l1")) {
				assertThat(first.isHeld()).isTrue();
				assertThat(second.isHeld()).isTrue();
			}
			try (LockHandle permit = locks.withPermits(2).acquire("export:l1")) {
				assertThat(permit.isHeld()).isTrue();
			}
		}
	}

}
