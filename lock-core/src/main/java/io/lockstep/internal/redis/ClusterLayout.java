package io.lockstep.internal.redis;

/**
 * The Redis Cluster's key layout: the lock key {@code <prefix><rest>} is stored as
 * {@code <prefix>{<tag>}<rest>}, where the tag is the one of the slot of the whole lock
 * key ({@link SlotTags}); each slot has one fencing counter
 * {@code <prefix>{<tag>}__fence} (at most 16,384 counters in all); the waiters of a key
 * are in {@code <prefix>{<tag>}__q:<rest>} and {@code <prefix>{<tag>}__w:<rest>}, and a
 * client hears its hand-offs of a slot's keys on {@code <prefix>{<tag>}__c:<client id>},
 * all in the key's slot. The release notification channel is the stored key itself. Every
 * script touches one slot.
 */
public final class ClusterLayout implements KeyLayout {

	private final String prefix;

	public ClusterLayout(String keyPrefix) {
		if (keyPrefix.contains("{") || keyPrefix.contains("}")) {
			throw new IllegalArgumentException("'keyPrefix' must not contain '{' or '}' on a Redis Cluster, where "
					+ "Lockstep sets the hash tag itself; got '" + keyPrefix + "'");
		}
		this.prefix = keyPrefix;
	}

	@Override
	public String stored(String key) {
		return this.prefix + tag(key) + rest(key);
	}

	@Override
	public String logical(String stored) {
		int close = stored.indexOf('}', this.prefix.length());
		return this.prefix + stored.substring(close + 1);
	}

	@Override
	public String fence(String key) {
		return this.prefix + tag(key) + "__fence";
	}

	@Override
	public String queue(String key) {
		return this.prefix + tag(key) + "__q:" + rest(key);
	}

	@Override
	public String table(String key) {
		return this.prefix + tag(key) + "__w:" + rest(key);
	}

	@Override
	public String handOffChannel(String key, String clientId) {
		return this.prefix + tag(key) + "__c:" + clientId;
	}

	@Override
	public int group(String key) {
		return SlotTags.slot(key);
	}

	@Override
	public boolean mayShard() {
		return true;
	}

	/** The hash tag of the slot of the whole lock key. */
	private static String tag(String key) {
		return "{" + SlotTags.tag(SlotTags.slot(key)) + "}";
	}

	private String rest(String key) {
		return key.startsWith(this.prefix) ? key.substring(this.prefix.length()) : key;
	}

}
