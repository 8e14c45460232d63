package io.lockstep.internal.redis;

import java.nio.charset.StandardCharsets;

import io.lettuce.core.codec.CRC16;

/**
 * One short hash tag per Redis Cluster slot. A lock key goes to the slot of its whole
 * logical key (CRC16 of every byte, braces included, so user input cannot steer it), and
 * Lockstep puts that slot's tag first in the stored key: the key, its fencing counter and
 * its notification channel then share the slot. Keys spread over the masters exactly as
 * plain keys would. The table is the same in every process: the first base-36 number that
 * hashes to each slot.
 */
public final class SlotTags {

	static final int SLOTS = 16384;

	private static final String[] TAGS = compute();

	private SlotTags() {
	}

	/** The slot of a logical key: CRC16 of all its bytes, modulo 16384. */
	public static int slot(String key) {
		return CRC16.crc16(key.getBytes(StandardCharsets.UTF_8)) & (SLOTS - 1);
	}

	/** A tag that Redis hashes to the slot. */
	public static String tag(int slot) {
		return TAGS[slot];
	}

	private static String[] compute() {
		String[] tags = new String[SLOTS];
		int missing = SLOTS;
		for (int i = 0; missing > 0; i++) {
			String tag = Integer.toString(i, 36);
			int slot = slot(tag);
			if (tags[slot] == null) {
				tags[slot] = tag;
				missing--;
			}
		}
		return tags;
	}

}
