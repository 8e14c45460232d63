package io.lockstep.internal.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * Where a lock's keys live in Redis: its stored key, fencing counter, waiter queue and
 * table, and the channel on which a client hears its hand-offs, and which keys one script
 * may touch together. The one difference between a single master (standalone or Sentinel)
 * and a Cluster that the {@link RedisStore} sees.
 */
public interface KeyLayout {

	/** The one group of a one-key lock. */
	List<List<Integer>> ONE_KEY = List.of(List.of(0));

	/** The stored key of a lock key ({@code <key-prefix>[<name>:]<key>}). */
	String stored(String key);

	/** The lock key of a stored key (the channel of a release notification). */
	String logical(String stored);

	/** The fencing counter that serves the key (no TTL). */
	String fence(String key);

	/** The key's waiter queue (a list of owner tokens). */
	String queue(String key);

	/** The key's waiter table (owner token to its entry). */
	String table(String key);

	/** The channel on which the client hears hand-offs of the key to its waiters. */
	String handOffChannel(String key, String clientId);

	/**
	 * Which keys one script may touch together: keys of the same group may, keys of two
	 * groups never do (on a Cluster, the slot).
	 */
	int group(String key);

	/** The indexes of the keys by {@link #group}, in group order. */
	default List<List<Integer>> groups(List<String> keys) {
		if (keys.size() == 1) {
			return ONE_KEY;
		}
		Map<Integer, List<Integer>> groups = new TreeMap<>();
		for (int i = 0; i < keys.size(); i++) {
			groups.computeIfAbsent(group(keys.get(i)), (group) -> new ArrayList<>()).add(i);
		}
		return new ArrayList<>(groups.values());
	}

	/** The stored keys of the keys at the indexes. */
	default List<String> stored(List<String> keys, List<Integer> indexes) {
		return each(keys, indexes, this::stored);
	}

	/**
	 * {@code name} of each key at the indexes, in order (a loop: it runs on every
	 * acquisition and release).
	 */
	static List<String> each(List<String> keys, List<Integer> indexes, UnaryOperator<String> name) {
		if (indexes.size() == 1) {
			return List.of(name.apply(keys.get(indexes.get(0))));
		}
		String[] names = new String[indexes.size()];
		for (int i = 0; i < names.length; i++) {
			names[i] = name.apply(keys.get(indexes.get(i)));
		}
		return List.of(names);
	}

	/**
	 * Whether release notifications may use sharded pub/sub, which the server's version
	 * then decides (a Cluster).
	 */
	boolean mayShard();

	/**
	 * A single master's layout: the lock key as it is, one fencing counter
	 * {@code <key-prefix>__fence}, the waiters of {@code <key-prefix><key>} in
	 * {@code <key-prefix>__q:<key>} and {@code <key-prefix>__w:<key>} (user keys cannot
	 * start with {@code "__"}), and the client's hand-off channel
	 * {@code <key-prefix>__c:<client id>}.
	 */
	static KeyLayout singleMaster(String keyPrefix) {
		String fence = keyPrefix + "__fence";
		/** A client's hand-off channel. */
		record Channel(String clientId, String name) {
		}
		return new KeyLayout() {

			/** The last client's hand-off channel: the same for every key. */
			private volatile Channel channel;

			@Override
			public String stored(String key) {
				return key;
			}

			@Override
			public String logical(String stored) {
				return stored;
			}

			@Override
			public String fence(String key) {
				return fence;
			}

			@Override
			public String queue(String key) {
				return keyPrefix + "__q:" + key.substring(keyPrefix.length());
			}

			@Override
			public String table(String key) {
				return keyPrefix + "__w:" + key.substring(keyPrefix.length());
			}

			@Override
			public String handOffChannel(String key, String clientId) {
				Channel last = this.channel;
				if (last == null || !last.clientId().equals(clientId)) {
					last = new Channel(clientId, keyPrefix + "__c:" + clientId);
					this.channel = last;
				}
				return last.name();
			}

			@Override
			public int group(String key) {
				return 0;
			}

			@Override
			public boolean mayShard() {
				return false;
			}

		};
	}

}
