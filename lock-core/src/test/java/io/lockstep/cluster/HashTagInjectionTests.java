package io.lockstep.cluster;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import io.lockstep.internal.redis.SlotTags;
import io.lockstep.internal.redis.ClusterLayout;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Braces in user input never steer a lock's slot, never split a lock's keys (lock key,
 * fencing counter, waiter queue and table) over two slots and never make one lock's
 * stored key equal another's or another's counter or queue. The slots are computed here
 * from the Redis Cluster specification (CRC16-XMODEM of the hash tag, or of the whole key
 * when it has none), not with the library's own CRC16. No Redis needed: the backend only
 * maps keys here and never connects.
 */
class HashTagInjectionTests {

	private static final String PREFIX = "lockstep:";

	private static final String[] PIECES = { "{", "}", "{}", "}{", "{{", "}}", "{a}", "{0}", "{1}", "__fence", ":",
			"user", "42", "ü", "\n", "{victim}", "victim" };

	private final ClusterLayout backend = new ClusterLayout(PREFIX);

	@Test
	void theSpecsCrc16MatchesItsTestVector() {
		// "the CRC16 of '123456789' is 0x31C3" (Redis Cluster specification, Appendix A)
		assertThat(crc16("123456789".getBytes(StandardCharsets.US_ASCII))).isEqualTo(0x31C3);
		assertThat(specSlot("{user1000}.following")).isEqualTo(specSlot("user1000"));
		assertThat(specSlot("foo{}{bar}")).isEqualTo(crc16("foo{}{bar}".getBytes(StandardCharsets.UTF_8)) & 16383);
		assertThat(specSlot("foo{{bar}}zap")).isEqualTo(specSlot("{bar"));
	}

	@Test
	void adversarialKeysStayInTheSlotOfTheirWholeKeyWithTheirFencingCounter() {
		Random random = new Random(7);
		Set<String> logical = new LinkedHashSet<>();
		// keys that copy another key's stored form
		logical.add(PREFIX + "victim");
		logical.add(PREFIX + this.backend.stored(PREFIX + "victim").substring(PREFIX.length()));
		logical.add(PREFIX + "{" + SlotTags.tag(specSlot(PREFIX + "victim")) + "}victim");
		logical.add(PREFIX + "{" + SlotTags.tag(SlotTags.slot(PREFIX + "victim")) + "}__fence");
		while (logical.size() < 1_000) {
			StringBuilder key = new StringBuilder(PREFIX);
			for (int i = 0, n = 1 + random.nextInt(6); i < n; i++) {
				key.append(PIECES[random.nextInt(PIECES.length)]);
			}
			if (!key.substring(PREFIX.length()).startsWith("__")) {
				// reserved: LockSettings refuses keys and names starting with "__"
				logical.add(key.toString());
			}
		}
		Map<String, String> logicalByStored = new HashMap<>();
		Set<String> counters = new HashSet<>();
		int steered = 0;
		int split = 0;
		int roundTrips = 0;
		for (String key : logical) {
			String stored = this.backend.stored(key);
			int wholeKeySlot = crc16(key.getBytes(StandardCharsets.UTF_8)) & 16383;
			String counter = this.backend.fence(key);
			String queue = this.backend.queue(key);
			String table = this.backend.table(key);
			counters.add(counter);
			counters.add(queue);
			counters.add(table);
			if (specSlot(stored) != wholeKeySlot) {
				steered++;
			}
			// the lock key, its fencing counter, its waiter queue and table, and its
			// channel (the stored key itself)
			if (specSlot(counter) != specSlot(stored) || specSlot(queue) != specSlot(stored)
					|| specSlot(table) != specSlot(stored)) {
				split++;
			}
			if (this.backend.logical(stored).equals(key)) {
				roundTrips++;
			}
			logicalByStored.put(stored, key);
		}
		Set<String> storedAndCounters = new HashSet<>(logicalByStored.keySet());
		storedAndCounters.retainAll(counters);
		System.out
			.printf("cluster keys: %,d adversarial keys with { } {} }{ and copied stored forms -> %d steered away from "
					+ "the slot of the whole key (spec CRC16), %d with the fencing counter or waiter queue in another "
					+ "slot, %,d distinct stored keys, %d equal to a fencing counter or waiter queue, %,d map back "
					+ "to their key%n", logical.size(), steered, split, logicalByStored.size(),
					storedAndCounters.size(), roundTrips);
		assertThat(steered).isZero();
		assertThat(split).isZero();
		assertThat(logicalByStored).hasSize(logical.size());
		assertThat(storedAndCounters).isEmpty();
		assertThat(roundTrips).isEqualTo(logical.size());
	}

	@Test
	void aPrefixWithBracesIsRefused() {
		List<String> prefixes = new ArrayList<>(List.of("{app}:", "app}:", "a{b:"));
		for (String prefix : prefixes) {
			assertThatIllegalArgumentException().isThrownBy(() -> new ClusterLayout(prefix))
				.withMessageContaining("'keyPrefix' must not contain '{' or '}'")
				.withMessageContaining(prefix);
		}
	}

	/** The slot Redis gives a key, per the Cluster specification's hash tag rule. */
	static int specSlot(String key) {
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		int open = -1;
		for (int i = 0; i < bytes.length; i++) {
			if (bytes[i] == '{') {
				open = i;
				break;
			}
		}
		if (open >= 0) {
			for (int close = open + 1; close < bytes.length; close++) {
				if (bytes[close] == '}') {
					if (close > open + 1) {
						byte[] tag = new byte[close - open - 1];
						System.arraycopy(bytes, open + 1, tag, 0, tag.length);
						return crc16(tag) & 16383;
					}
					break;
				}
			}
		}
		return crc16(bytes) & 16383;
	}

	/** CRC16-XMODEM (polynomial 0x1021, initial value 0), bit by bit. */
	static int crc16(byte[] bytes) {
		int crc = 0;
		for (byte b : bytes) {
			crc ^= (b & 0xff) << 8;
			for (int i = 0; i < 8; i++) {
				crc = ((crc & 0x8000) != 0) ? ((crc << 1) ^ 0x1021) : (crc << 1);
				crc &= 0xffff;
			}
		}
		return crc;
	}

}
