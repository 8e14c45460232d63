package io.lockstep.autoconfigure;

import io.lockstep.redis.RedisLockTemplate;
import io.lockstep.redis.RedisLockTemplateBuilder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Lettuce client Lockstep locks through. On the application's
 * {@link LettuceConnectionFactory} (Spring Boot's default) it shares that factory's
 * client and never closes it. On any other {@link RedisConnectionFactory} (Jedis,
 * Redisson, a factory of the application's own) Lockstep's locks need Lettuce all the
 * same, so it opens a Lettuce client of its own: where a {@code JedisConnectionFactory}
 * points (its standalone, Sentinel or Cluster configuration; a WARN names both places
 * when Spring Boot's connection details point elsewhere), else where Spring Boot's
 * {@link DataRedisConnectionDetails} point ({@code spring.data.redis.*},
 * {@code @ServiceConnection}, Docker Compose); {@link #close()} shuts that client down
 * with the context.
 */
final class LockstepRedisClient implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LockstepRedisClient.class);

	private final LettuceConnectionFactory lettuce;

	private final boolean own;

	private LockstepRedisClient(LettuceConnectionFactory lettuce, boolean own) {
		this.lettuce = lettuce;
		this.own = own;
	}

	/**
	 * @param details Spring Boot's connection details, needed only when the application's
	 * factory is not Lettuce's
	 * @param properties {@code spring.data.redis.*} for the timeouts, the client name and
	 * the Cluster topology refresh of an own client; may be {@code null}
	 */
	static LockstepRedisClient of(RedisConnectionFactory applicationFactory,
			ObjectProvider<DataRedisConnectionDetails> details, @Nullable DataRedisProperties properties) {
		if (applicationFactory instanceof LettuceConnectionFactory lettuce) {
			if (properties != null && properties.getClientType() == null && JedisTarget.present()) {
				logger.info("Jedis is on the classpath, but the application's RedisConnectionFactory is Lettuce's "
						+ "(Spring Boot prefers Lettuce when both are present, and Lockstep needs lettuce-core): "
						+ "to run the application's own Redis access on Jedis, set spring.data.redis.client-type=jedis");
			}
			return new LockstepRedisClient(lettuce, false);
		}
		DataRedisConnectionDetails connectionDetails = details.getIfAvailable();
		RedisConfiguration jedis = JedisTarget.of(applicationFactory);
		LettuceConnectionFactory own;
		if (jedis != null) {
			// where the application's data goes, whatever spring.data.redis.* says
			boolean ssl = JedisTarget.usesSsl(applicationFactory);
			own = ConnectionDetailsLettuce.connectionFactory(jedis,
					(ssl && connectionDetails != null) ? connectionDetails.getSslBundle() : null, ssl, properties);
			String where = ConnectionDetailsLettuce.describe(jedis) + (ssl ? " over TLS" : "");
			logger.info(
					"The application's RedisConnectionFactory is a {}: Lockstep opens a Lettuce client of its own "
							+ "to {} (where that factory points) and closes it with the context",
					applicationFactory.getClass().getSimpleName(), where);
			if (connectionDetails != null && !ConnectionDetailsLettuce.describe(connectionDetails).equals(where)) {
				logger.warn(
						"Spring Boot's connection details (spring.data.redis.*) point to {}, the application's "
								+ "{} to {}: Lockstep locks where the factory points, with the application's data",
						ConnectionDetailsLettuce.describe(connectionDetails),
						applicationFactory.getClass().getSimpleName(), where);
			}
		}
		else {
			if (connectionDetails == null) {
				throw new IllegalStateException("Lockstep locks through Lettuce and the application's "
						+ "RedisConnectionFactory is a " + applicationFactory.getClass().getName()
						+ ": Lockstep then opens a Lettuce client of its own from Spring Boot's "
						+ "DataRedisConnectionDetails, and there is no such bean. Let Spring Boot's "
						+ "DataRedisAutoConfiguration run (spring.data.redis.*) or define a DataRedisConnectionDetails "
						+ "bean");
			}
			own = ConnectionDetailsLettuce.connectionFactory(connectionDetails, properties);
			logger.info(
					"The application's RedisConnectionFactory is a {}: Lockstep opens a Lettuce client of its own "
							+ "to {} (from Spring Boot's DataRedisConnectionDetails, as Lockstep cannot read where "
							+ "that factory points) and closes it with the context",
					applicationFactory.getClass().getSimpleName(),
					ConnectionDetailsLettuce.describe(connectionDetails));
		}
		try {
			own.afterPropertiesSet();
		}
		catch (RuntimeException ex) {
			own.destroy();
			throw ex;
		}
		return new LockstepRedisClient(own, true);
	}

	RedisLockTemplateBuilder builder() {
		return RedisLockTemplate.builder(this.lettuce);
	}

	/** The factory whose client Lockstep locks through. */
	LettuceConnectionFactory connectionFactory() {
		return this.lettuce;
	}

	/** Whether the client is Lockstep's own, not the application's. */
	boolean isOwn() {
		return this.own;
	}

	/** Shuts down Lockstep's own client; a shared one stays the application's. */
	@Override
	public void close() {
		if (this.own) {
			this.lettuce.destroy();
		}
	}

}
