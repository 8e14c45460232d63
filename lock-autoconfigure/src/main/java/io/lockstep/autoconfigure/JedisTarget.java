package io.lockstep.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Where an application's {@link JedisConnectionFactory} points: its Sentinel, Cluster or
 * standalone configuration, as Spring Data Redis holds it. Lockstep's own Lettuce client
 * connects there, so that its locks live with the application's data whatever
 * {@code spring.data.redis.*} says. Touches Jedis' types only when Jedis is present.
 */
final class JedisTarget {

	private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.Jedis",
			JedisTarget.class.getClassLoader());

	private JedisTarget() {
	}

	/** Whether Jedis is on the classpath. */
	static boolean present() {
		return JEDIS_PRESENT;
	}

	/**
	 * The configuration of the factory when it is Jedis', else {@code null}.
	 */
	static @Nullable RedisConfiguration of(RedisConnectionFactory factory) {
		if (!JEDIS_PRESENT || !(factory instanceof JedisConnectionFactory jedis)) {
			return null;
		}
		if (jedis.isRedisSentinelAware()) {
			return jedis.getSentinelConfiguration();
		}
		if (jedis.isRedisClusterAware()) {
			return jedis.getClusterConfiguration();
		}
		return jedis.getStandaloneConfiguration();
	}

	/** Whether the Jedis factory connects over TLS. */
	static boolean usesSsl(RedisConnectionFactory factory) {
		return ((JedisConnectionFactory) factory).getClientConfiguration().isUseSsl();
	}

}
