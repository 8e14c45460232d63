package io.lockstep.autoconfigure;

import io.lockstep.DistributedLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code lockstep.locks.<name>} entry that no {@code @DistributedLock} names is
 * reported with one WARN at start-up (a typo there would otherwise be ignored silently).
 */
@ExtendWith(OutputCaptureExtension.class)
class UnusedLockNamesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
		.withPropertyValues("lockstep.enabled=false")
		.withBean(Orders.class);

	@Test
	void warnsOfALockNameThatNoLockUses(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("lockstep.locks.orders.wait-time=1s", "lockstep.locks.ordres.lease-time=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("WARN")
					.contains("lockstep.locks.ordres is set, but no @DistributedLock is named 'ordres'")
					.contains("[orders]")
					.doesNotContain("lockstep.locks.orders is set");
			});
	}

	@Test
	void saysNothingWhenEveryLockNameIsUsed(CapturedOutput output) {
		this.contextRunner.withPropertyValues("lockstep.locks.orders.wait-time=1s")
			.run((context) -> assertThat(output).doesNotContain("is set, but no @DistributedLock"));
	}

	static class Orders {

		@DistributedLock(name = "orders", key = "#id")
		String place(String id) {
			return id;
		}

	}

}
