package io.lockstep.sample;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import io.lockstep.DistributedLocks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Leader election across the sample's instances: Spring Integration's
 * {@link LockRegistryLeaderInitiator} over the {@code LockstepLockRegistry} that Lockstep
 * auto-configures. The leader keeps its lock's fencing token as its epoch; a leader-only
 * task runs on the leader alone, and {@code GET /api/leader} says which instance leads.
 */
@Configuration(proxyBeanMethods = false)
class LeaderElection {

	@Bean
	Leader leader() {
		return new Leader("instance-" + UUID.randomUUID().toString().substring(0, 8));
	}

	@Bean
	LockRegistryLeaderInitiator leaderInitiator(LockRegistry<?> lockRegistry, Leader leader) {
		return new LockRegistryLeaderInitiator(lockRegistry, leader);
	}

	/** This instance as a candidate: leading or not, with its epoch while it leads. */
	static final class Leader extends DefaultCandidate {

		private static final Logger logger = LoggerFactory.getLogger(Leader.class);

		private final AtomicLong tasks = new AtomicLong();

		private volatile boolean leading;

		private volatile long epoch = -1;

		Leader(String id) {
			super(id, "sample-leader");
		}

		@Override
		public void onGranted(Context context) {
			// called on the initiator's thread, which holds the lock: its fencing token
			this.epoch = DistributedLocks.currentFencingToken().orElse(-1);
			this.leading = true;
			logger.info("{} leads (epoch {})", getId(), this.epoch);
		}

		@Override
		public void onRevoked(Context context) {
			this.leading = false;
			logger.info("{} no longer leads", getId());
		}

		/**
		 * The leader-only task: runs on every instance's schedule, works on the leader.
		 */
		@Scheduled(fixedRateString = "${sample.leader-task-interval:10s}")
		void leaderOnlyTask() {
			if (this.leading) {
				this.tasks.incrementAndGet();
				// a real task passes the epoch with its writes, so that storage refuses a
				// replaced leader's
				logger.info("Leader-only task on {} (epoch {})", getId(), this.epoch);
			}
		}

		boolean leading() {
			return this.leading;
		}

		long epoch() {
			return this.epoch;
		}

		long tasks() {
			return this.tasks.get();
		}

	}

	@RestController
	static final class LeaderController {

		private final Leader leader;

		LeaderController(Leader leader) {
			this.leader = leader;
		}

		@GetMapping("/api/leader")
		Map<String, Object> leader() {
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("instance", this.leader.getId());
			body.put("leader", this.leader.leading());
			body.put("epoch", this.leader.leading() ? this.leader.epoch() : null);
			body.put("leaderOnlyTaskRuns", this.leader.tasks());
			return body;
		}

	}

}
