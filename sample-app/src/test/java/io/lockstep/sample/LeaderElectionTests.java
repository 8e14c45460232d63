package io.lockstep.sample;

import java.time.Duration;
import java.util.Map;

import io.lockstep.integration.LockstepLockRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's leader election: the one instance of the test leads, through the
 * auto-configured {@link LockstepLockRegistry}, and {@code /api/leader} says so with its
 * epoch.
 */
@SpringBootTest(properties = "sample.leader-task-interval=100ms")
class LeaderElectionTests {

	@Autowired
	private LockRegistry<?> lockRegistry;

	@Autowired
	private LeaderElection.Leader leader;

	@Autowired
	private LeaderElection.LeaderController controller;

	@Test
	void theOnlyInstanceLeadsAndRunsTheLeaderOnlyTask() {
		assertThat(this.lockRegistry).isInstanceOf(LockstepLockRegistry.class);
		await("leads and ran the leader-only task").atMost(Duration.ofSeconds(30))
			.until(() -> this.leader.leading() && this.leader.tasks() > 0);
		Map<String, Object> body = this.controller.leader();
		System.out.println("sample: GET /api/leader -> " + body);
		assertThat(body).containsEntry("instance", this.leader.getId()).containsEntry("leader", true);
		assertThat((Long) body.get("epoch")).isPositive();
	}

}
