package io.lockstep.test;

import java.util.List;
import java.util.Map;

/**
 * A Sentinel-monitored group: the initial master, its replicas and the sentinels. After a
 * failover, ask a sentinel for the current master with {@link #currentMasterPort()}.
 */
public record Sentinels(RedisNode master, List<RedisNode> replicas, List<RedisNode> sentinels) {

	/** The name the sentinels monitor the master under. */
	public static final String MASTER_NAME = "mymaster";

	/** The port of the master that the first running sentinel reports now. */
	public int currentMasterPort() {
		for (RedisNode sentinel : this.sentinels) {
			if (sentinel.isRunning()) {
				@SuppressWarnings("unchecked")
				List<Object> address = (List<Object>) sentinel.call("SENTINEL", "get-master-addr-by-name", MASTER_NAME);
				return Integer.parseInt((String) address.get(1));
			}
		}
		throw new IllegalStateException("No sentinel is running");
	}

	boolean sees(RedisNode sentinel) {
		@SuppressWarnings("unchecked")
		List<Object> reply = (List<Object>) sentinel.call("SENTINEL", "master", MASTER_NAME);
		Map<String, String> fields = new java.util.HashMap<>();
		for (int i = 0; i + 1 < reply.size(); i += 2) {
			fields.put((String) reply.get(i), String.valueOf(reply.get(i + 1)));
		}
		return Integer.parseInt(fields.getOrDefault("num-slaves", "0")) == this.replicas.size()
				&& Integer.parseInt(fields.getOrDefault("num-other-sentinels", "0")) == this.sentinels.size() - 1;
	}

}
