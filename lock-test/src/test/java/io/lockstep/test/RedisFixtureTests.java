package io.lockstep.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RedisFixtureTests {

	@Test
	void startsKillsRestartsPausesAndLeavesNoProcessBehind() {
		Set<Long> pids = new HashSet<>();
		List<Path> dirs = new ArrayList<>();
		try (RedisFixture fixture = new RedisFixture()) {
			List<RedisNode> masters = fixture.masters(5);
			RedisFixture.Replicated replicated = fixture.replicated(1);
			List<RedisNode> all = fixture.nodes();
			assertThat(all).hasSize(7);
			assertThat(all).map(RedisNode::port).doesNotHaveDuplicates();
			all.forEach((node) -> pids.add(node.pid()));
			all.forEach((node) -> dirs.add(pidFile(node).getParent()));
			for (RedisNode master : masters) {
				assertThat(master.call("SET", "k", master.name())).isEqualTo("OK");
				assertThat(master.info("replication")).containsEntry("role", "master");
			}
			// independent masters: each keeps its own value
			assertThat(masters).map((m) -> m.call("GET", "k"))
				.containsExactly("master-1", "master-2", "master-3", "master-4", "master-5");
			replicated.master().call("SET", "replicated", "yes");
			RedisFixture.await("the replica to copy the key", Duration.ofSeconds(10),
					() -> "yes".equals(replicated.replica().call("GET", "replicated")));

			RedisNode victim = masters.get(1);
			long oldPid = victim.pid();
			int port = victim.port();
			victim.kill();
			assertThat(victim.isRunning()).isFalse();
			assertThat(ProcessHandle.of(oldPid)).isEmpty();
			victim.restart();
			pids.add(victim.pid());
			assertThat(victim.pid()).isNotEqualTo(oldPid);
			assertThat(victim.port()).isEqualTo(port);
			assertThat(victim.call("GET", "k")).as("restart starts empty").isNull();

			RedisNode paused = masters.get(2).pause();
			assertThatExceptionOfType(IOException.class).as("a paused node does not answer")
				.isThrownBy(() -> Resp.call(paused.host(), paused.port(), Duration.ofMillis(300), "PING"));
			assertThat(paused.isRunning()).isTrue();
			paused.resume();
			assertThat(paused.call("GET", "k")).isEqualTo("master-3");

			assertThat(RedisProcesses.livePids()).containsAll(all.stream().map(RedisNode::pid).toList());
		}
		List<Long> survivors = pids.stream().filter((pid) -> ProcessHandle.of(pid).isPresent()).toList();
		System.out.printf("redis-server processes started: %d, left running after close: %d%n", pids.size(),
				survivors.size());
		assertThat(pids).hasSize(8);
		assertThat(survivors).isEmpty();
		assertThat(dirs).allMatch((dir) -> !Files.exists(dir));
	}

	@Test
	void formsAClusterAndASentinelGroup() {
		Set<Long> pids = new HashSet<>();
		try (RedisFixture fixture = new RedisFixture()) {
			Cluster cluster = fixture.cluster(3, 0);
			assertThat(cluster.masters()).allMatch((node) -> "ok".equals(Cluster.clusterInfo(node, "cluster_state")));
			assertThat(cluster.addresses()).hasSize(3);

			Sentinels sentinels = fixture.sentinels(1, 3);
			assertThat(sentinels.currentMasterPort()).isEqualTo(sentinels.master().port());
			fixture.nodes().forEach((node) -> pids.add(node.pid()));
		}
		assertThat(pids).hasSize(8).allMatch((pid) -> ProcessHandle.of(pid).isEmpty());
	}

	@Test
	void reportsWhyANodeCannotStart() {
		try (RedisFixture fixture = new RedisFixture()) {
			assertThatExceptionOfType(IllegalStateException.class)
				.isThrownBy(() -> fixture.standalone("--no-such-option", "1"))
				.withMessageContaining("exited")
				.withMessageContaining("no-such-option");
		}
	}

	private static Path pidFile(RedisNode node) {
		try {
			String dirName = "lockstep-redis-" + ProcessHandle.current().pid() + "-" + node.name() + "-";
			try (var dirs = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
				return dirs.filter((dir) -> dir.getFileName().toString().startsWith(dirName))
					.map((dir) -> dir.resolve("node.pid"))
					.filter((file) -> Files.exists(file) && readPid(file) == node.pid())
					.findFirst()
					.orElseThrow();
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static long readPid(Path file) {
		try {
			return Long.parseLong(Files.readAllLines(file).get(0).trim());
		}
		catch (IOException ex) {
			return -1;
		}
	}

}
