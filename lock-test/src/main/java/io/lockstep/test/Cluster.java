package io.lockstep.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A small Redis Cluster on {@code 127.0.0.1}: masters sharing the 16384 slots evenly and
 * optional replicas, assigned round-robin to the masters (replica {@code i} to master
 * {@code i % masters}) and synced with them before the cluster is returned.
 */
public record Cluster(List<RedisNode> masters, List<RedisNode> replicas) {

	static final int SLOTS = 16384;

	/** Every node, masters first. */
	public List<RedisNode> nodes() {
		List<RedisNode> all = new ArrayList<>(this.masters);
		all.addAll(this.replicas);
		return all;
	}

	/**
	 * {@code 127.0.0.1:<port>} of every node, as {@code spring.data.redis.cluster.nodes}
	 * takes them.
	 */
	public List<String> addresses() {
		return nodes().stream().map((node) -> node.host() + ":" + node.port()).toList();
	}

	void form() {
		int perMaster = SLOTS / this.masters.size();
		for (int i = 0; i < this.masters.size(); i++) {
			int first = i * perMaster;
			int last = (i == this.masters.size() - 1) ? SLOTS - 1 : first + perMaster - 1;
			List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
			for (int slot = first; slot <= last; slot++) {
				command.add(Integer.toString(slot));
			}
			this.masters.get(i).call(command.toArray(String[]::new));
		}
		RedisNode first = this.masters.get(0);
		for (RedisNode node : nodes().subList(1, nodes().size())) {
			first.call("CLUSTER", "MEET", node.host(), Integer.toString(node.port()));
		}
		int total = nodes().size();
		for (RedisNode node : nodes()) {
			RedisFixture.await(node + " to know " + total + " cluster nodes", Duration.ofSeconds(30),
					() -> Integer.parseInt(clusterInfo(node, "cluster_known_nodes")) == total);
		}
		for (int i = 0; i < this.replicas.size(); i++) {
			RedisNode master = this.masters.get(i % this.masters.size());
			String masterId = ((String) master.call("CLUSTER", "MYID"));
			this.replicas.get(i).call("CLUSTER", "REPLICATE", masterId);
		}
		for (RedisNode node : nodes()) {
			RedisFixture.await(node + " to report cluster_state:ok", Duration.ofSeconds(30),
					() -> "ok".equals(clusterInfo(node, "cluster_state")));
		}
		// a replica that never synced cannot replace its master
		for (RedisNode replica : this.replicas) {
			RedisFixture.await(replica + " to sync with its master", Duration.ofSeconds(30),
					() -> "up".equals(replica.info("replication").get("master_link_status")));
		}
	}

	static String clusterInfo(RedisNode node, String field) {
		String info = (String) node.call("CLUSTER", "INFO");
		return info.lines()
			.filter((line) -> line.startsWith(field + ":"))
			.map((line) -> line.substring(field.length() + 1).trim())
			.findFirst()
			.orElse("");
	}

}
