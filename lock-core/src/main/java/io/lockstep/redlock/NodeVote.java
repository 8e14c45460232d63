package io.lockstep.redlock;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One node's vote on an acquire, its answer to {@code acquire-all.lua}: acquired, held by
 * another owner, or refused.
 *
 * @param status {@link #ACQUIRED}, {@link #HELD} or {@link #REFUSED}
 * @param fencingTokens when acquired: the node's fencing token of each key
 * @param holderTtl when held: the longest remaining lease of the keys held by others, ms
 * @param blockingIndex when held: the index of the first key held by another owner
 * @param holder when held: the owner token holding that key
 */
record NodeVote(int status, long @Nullable [] fencingTokens, long holderTtl, int blockingIndex,
		@Nullable String holder) {

	static final int ACQUIRED = 1;

	static final int HELD = 0;

	/** The node does not persist its data and takes no part in locks. */
	static final int REFUSED = -1;

	static NodeVote of(List<?> reply, int keys) {
		int status = ((Long) reply.get(0)).intValue();
		if (status == ACQUIRED) {
			long[] tokens = new long[keys];
			for (int i = 0; i < keys; i++) {
				tokens[i] = (Long) reply.get(i + 1);
			}
			return new NodeVote(ACQUIRED, tokens, -1, -1, null);
		}
		if (status == HELD) {
			Object holder = reply.get(3);
			String owner = (holder instanceof byte[] bytes) ? new String(bytes, StandardCharsets.UTF_8)
					: String.valueOf(holder);
			return new NodeVote(HELD, null, (Long) reply.get(1), ((Long) reply.get(2)).intValue(), owner);
		}
		return new NodeVote(REFUSED, null, -1, -1, null);
	}

	boolean acquired() {
		return this.status == ACQUIRED;
	}

	boolean held() {
		return this.status == HELD;
	}

	boolean refused() {
		return this.status == REFUSED;
	}

}
