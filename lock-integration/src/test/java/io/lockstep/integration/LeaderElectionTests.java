package io.lockstep.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.DistributedLocks;
import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.test.ChaosProxy;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationListener;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leader election with Spring Integration's own {@link LockRegistryLeaderInitiator} over
 * {@link LockstepLockRegistry}: two candidates in two Spring contexts, on two Redis
 * clients, against a real Redis.
 */
@RedisTest
class LeaderElectionTests {

	private static final Duration LEASE = Duration.ofSeconds(1);

	private static final long HEARTBEAT_MILLIS = 100;

	private final RedisNode redis;

	/** Every candidate's leader events, in the order they were published. */
	private final List<String> events = new CopyOnWriteArrayList<>();

	private final List<AutoCloseable> closer = new ArrayList<>();

	LeaderElectionTests(RedisNode redis) {
		this.redis = redis;
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closer.size() - 1; i >= 0; i--) {
			this.closer.get(i).close();
		}
	}

	@Test
	void oneLeaderAtATimeOverManyHeartbeatsAndTheOtherTakesOverWhenTheLeaderStops() throws Exception {
		Candidate a = candidate("a", this.redis.port());
		Candidate b = candidate("b", this.redis.port());
		await().atMost(Duration.ofSeconds(20)).until(() -> a.leading() || b.leading());
		int samples = oneLeaderThroughout(a, b, Duration.ofSeconds(2));
		Candidate leader = a.leading() ? a : b;
		Candidate other = (leader == a) ? b : a;
		long firstEpoch = leader.leader.epoch;
		assertThat(firstEpoch).as("the fencing token on the initiator's thread in onGranted").isPositive();

		leader.context.getBean(LockRegistryLeaderInitiator.class).stop();
		await("the other takes over").atMost(Duration.ofSeconds(20)).until(other::leading);
		int after = oneLeaderThroughout(a, b, Duration.ofSeconds(1));
		System.out.printf(
				"leader election: %s led (epoch %d) through %d samples over %d heartbeats; after it stopped %s led "
						+ "(epoch %d) through %d samples; events %s%n",
				leader.name, firstEpoch, samples, 2000 / HEARTBEAT_MILLIS, other.name, other.leader.epoch, after,
				this.events);
		assertThat(other.leader.epoch).as("the new leader's epoch (fencing token)").isGreaterThan(firstEpoch);
		assertThat(eventsOf(leader)).containsExactly("granted", "revoked");
		assertThat(eventsOf(other)).containsExactly("granted");
	}

	@Test
	void theOtherTakesOverWhenTheLeaderLosesItsLease() throws Exception {
		ChaosProxy proxy = ChaosProxy.to(this.redis);
		this.closer.add(proxy);
		Candidate a = candidate("a", proxy.port());
		await("a leads first").atMost(Duration.ofSeconds(20)).until(a::leading);
		Candidate b = candidate("b", this.redis.port());
		oneLeaderThroughout(a, b, Duration.ofSeconds(1));
		assertThat(a.leading()).isTrue();
		long firstEpoch = a.leader.epoch;

		long cut = System.nanoTime();
		proxy.blackhole();
		await("b leads and a does not once a's connection is cut").atMost(Duration.ofSeconds(20))
			.until(() -> b.leading() && !a.leading());
		long handedOver = (System.nanoTime() - cut) / 1_000_000;
		int after = oneLeaderThroughout(a, b, Duration.ofSeconds(1));
		System.out.printf(
				"leader election: a's Redis connection cut while leading (epoch %d); b leads (epoch %d) %d ms later "
						+ "(lease %d ms), alone through %d samples; events %s%n",
				firstEpoch, b.leader.epoch, handedOver, LEASE.toMillis(), after, this.events);
		assertThat(b.leader.epoch).as("the new leader's epoch (fencing token)").isGreaterThan(firstEpoch);
		assertThat(eventsOf(a)).startsWith("granted", "revoked");
		assertThat(eventsOf(b)).containsExactly("granted");
		assertThat(this.events).containsSubsequence("a:granted", "b:granted");
	}

	/**
	 * Samples both candidates every 10 ms for {@code period}: exactly one leads at every
	 * sample.
	 * @return the number of samples
	 */
	private int oneLeaderThroughout(Candidate a, Candidate b, Duration period) {
		AtomicInteger samples = new AtomicInteger();
		List<String> wrong = new CopyOnWriteArrayList<>();
		// samples every 10 ms throughout the period (a condition that always holds)
		await().during(period)
			.atMost(period.plusSeconds(5))
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(10))
			.until(() -> {
				int leaders = (a.leading() ? 1 : 0) + (b.leading() ? 1 : 0);
				if (leaders != 1) {
					wrong.add(leaders + " leaders at sample " + samples.get());
				}
				samples.incrementAndGet();
				return true;
			});
		assertThat(wrong).as("samples without exactly one leader").isEmpty();
		return samples.get();
	}

	private List<String> eventsOf(Candidate candidate) {
		String prefix = candidate.name + ":";
		return this.events.stream()
			.filter((event) -> event.startsWith(prefix))
			.map((event) -> event.substring(prefix.length()))
			.toList();
	}

	/**
	 * A candidate in a Spring context of its own, with its own Redis client (on
	 * {@code port}: the node's, or a proxy's) and template.
	 */
	private Candidate candidate(String name, int port) {
		RedisClient client = RedisClient.create(RedisURI.create(this.redis.host(), port));
		RedisLockTemplate template = RedisLockTemplate.builder(client)
			.leaseTime(LEASE)
			.commandTimeout(Duration.ofMillis(300))
			.build();
		Leader leader = new Leader(name);
		GenericApplicationContext context = new GenericApplicationContext();
		context.registerBean(LockstepLockRegistry.class, () -> new LockstepLockRegistry(template.named("leader")));
		context.registerBean(LockRegistryLeaderInitiator.class, () -> {
			LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(
					context.getBean(LockstepLockRegistry.class), leader);
			initiator.setHeartBeatMillis(HEARTBEAT_MILLIS);
			initiator.setBusyWaitMillis(50);
			return initiator;
		});
		context.addApplicationListener((ApplicationListener<AbstractLeaderEvent>) (event) -> {
			if (event instanceof OnGrantedEvent) {
				this.events.add(name + ":granted");
			}
			else if (event instanceof OnRevokedEvent) {
				this.events.add(name + ":revoked");
			}
		});
		this.closer.add(client::shutdown);
		this.closer.add(template);
		this.closer.add(context::close);
		context.refresh();
		return new Candidate(name, context, leader);
	}

	private record Candidate(String name, GenericApplicationContext context, Leader leader) {

		boolean leading() {
			return this.leader.leading;
		}

	}

	/**
	 * The recipe's candidate: on grant, it keeps the lock's fencing token as its epoch,
	 * to pass with every write it makes as the leader.
	 */
	static final class Leader extends DefaultCandidate {

		volatile boolean leading;

		volatile long epoch = -1;

		Leader(String name) {
			super(name, "leader");
		}

		@Override
		public void onGranted(Context context) {
			this.epoch = DistributedLocks.currentFencingToken().orElse(-1);
			this.leading = true;
		}

		@Override
		public void onRevoked(Context context) {
			this.leading = false;
		}

	}

}
