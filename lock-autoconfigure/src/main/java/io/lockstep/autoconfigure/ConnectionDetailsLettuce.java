package io.lockstep.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.data.redis.connection.NamedNode;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.StringUtils;

/**
 * A {@link LettuceConnectionFactory} (not started) built from Spring Boot's
 * {@link DataRedisConnectionDetails} as Spring Boot's own Lettuce configuration reads
 * them: Sentinel, else Cluster, else standalone; the ACL user and password (and the
 * Sentinels' own); the SSL bundle's key and trust managers, ciphers and protocols
 * ({@code rediss://} URLs without a bundle use the JVM's trust store); and from
 * {@code spring.data.redis.*} the command and connect timeouts, the client name and the
 * Cluster topology refresh. Left out on purpose: {@code lettuce.read-from} (a lock is
 * taken on the master only) and pooling (Lockstep keeps its own few connections). The
 * application's {@code Lettuce*Customizer} beans are not applied: they are for its own
 * Lettuce factory.
 */
final class ConnectionDetailsLettuce {

	private ConnectionDetailsLettuce() {
	}

	static LettuceConnectionFactory connectionFactory(DataRedisConnectionDetails details,
			@Nullable DataRedisProperties properties) {
		DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
		DataRedisConnectionDetails.Cluster cluster = details.getCluster();
		DataRedisConnectionDetails.MasterReplica masterReplica = details.getMasterReplica();
		if (sentinel == null && cluster == null && masterReplica != null) {
			throw new IllegalStateException("Lockstep locks on the one master of a deployment and cannot tell it "
					+ "among the static master/replica nodes of spring.data.redis.masterreplica.nodes "
					+ nodes(masterReplica.getNodes())
					+ ": point spring.data.redis.host/port (or a DataRedisConnectionDetails bean) at the master, "
					+ "or use Sentinel");
		}
		boolean ssl = properties != null && properties.getUrl() != null && properties.getUrl().startsWith("rediss://");
		return connectionFactory(target(details), details.getSslBundle(), ssl, properties);
	}

	/**
	 * A factory on the given server, Sentinels or Cluster (Spring Data Redis'
	 * configuration, as another client's factory of the application holds it).
	 * @param bundle the SSL bundle, or {@code null}
	 * @param ssl whether to use TLS without a bundle (the JVM's trust store)
	 */
	static LettuceConnectionFactory connectionFactory(RedisConfiguration target, @Nullable SslBundle bundle,
			boolean ssl, @Nullable DataRedisProperties properties) {
		LettuceClientConfiguration client = clientConfiguration(bundle, ssl,
				target instanceof RedisClusterConfiguration, properties);
		if (target instanceof RedisSentinelConfiguration sentinel) {
			return new LettuceConnectionFactory(sentinel, client);
		}
		if (target instanceof RedisClusterConfiguration cluster) {
			return new LettuceConnectionFactory(cluster, client);
		}
		return new LettuceConnectionFactory((RedisStandaloneConfiguration) target, client);
	}

	/** Where the connection details point: Sentinel, else Cluster, else standalone. */
	static RedisConfiguration target(DataRedisConnectionDetails details) {
		DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
		if (sentinel != null) {
			return sentinel(details, sentinel);
		}
		DataRedisConnectionDetails.Cluster cluster = details.getCluster();
		if (cluster != null) {
			return cluster(details, cluster);
		}
		return standalone(details);
	}

	/** Where the client connects, for the log. */
	static String describe(DataRedisConnectionDetails details) {
		String ssl = (details.getSslBundle() != null) ? " over TLS" : "";
		if (details.getSentinel() == null && details.getCluster() == null && details.getStandalone() == null) {
			return "nowhere (the connection details name no server)";
		}
		return describe(target(details)) + ssl;
	}

	/** A server, Sentinels or Cluster, for the log. */
	static String describe(RedisConfiguration target) {
		if (target instanceof RedisSentinelConfiguration sentinel) {
			NamedNode master = sentinel.getMaster();
			return "master '" + ((master != null) ? master.getName() : "?") + "' of the Sentinels "
					+ describeNodes(sentinel.getSentinels());
		}
		if (target instanceof RedisClusterConfiguration cluster) {
			return "the Redis Cluster of " + describeNodes(cluster.getClusterNodes());
		}
		RedisStandaloneConfiguration standalone = (RedisStandaloneConfiguration) target;
		return standalone.getHostName() + ":" + standalone.getPort() + " (database " + standalone.getDatabase() + ")";
	}

	private static RedisStandaloneConfiguration standalone(DataRedisConnectionDetails details) {
		DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
		if (standalone == null) {
			throw new IllegalStateException("Lockstep cannot open its Lettuce client: the DataRedisConnectionDetails "
					+ "bean (" + details.getClass().getName() + ") names no standalone server, Sentinel or Cluster");
		}
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(standalone.getHost(),
				standalone.getPort());
		configuration.setDatabase(standalone.getDatabase());
		configuration.setUsername(details.getUsername());
		configuration.setPassword(RedisPassword.of(details.getPassword()));
		return configuration;
	}

	private static RedisSentinelConfiguration sentinel(DataRedisConnectionDetails details,
			DataRedisConnectionDetails.Sentinel sentinel) {
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration();
		configuration.master(sentinel.getMaster());
		configuration.setSentinels(redisNodes(sentinel.getNodes()));
		configuration.setDatabase(sentinel.getDatabase());
		configuration.setUsername(details.getUsername());
		configuration.setPassword(RedisPassword.of(details.getPassword()));
		configuration.setSentinelUsername(sentinel.getUsername());
		configuration.setSentinelPassword(RedisPassword.of(sentinel.getPassword()));
		return configuration;
	}

	private static RedisClusterConfiguration cluster(DataRedisConnectionDetails details,
			DataRedisConnectionDetails.Cluster cluster) {
		RedisClusterConfiguration configuration = new RedisClusterConfiguration();
		configuration.setClusterNodes(redisNodes(cluster.getNodes()));
		configuration.setUsername(details.getUsername());
		configuration.setPassword(RedisPassword.of(details.getPassword()));
		return configuration;
	}

	private static LettuceClientConfiguration clientConfiguration(@Nullable SslBundle bundle, boolean ssl,
			boolean cluster, @Nullable DataRedisProperties properties) {
		LettuceClientConfiguration.LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		ClientOptions.Builder options = cluster ? clusterOptions(properties) : ClientOptions.builder();
		if (bundle != null) {
			builder.useSsl();
			options.sslOptions(sslOptions(bundle));
		}
		else if (ssl) {
			builder.useSsl();
		}
		if (properties != null) {
			if (properties.getTimeout() != null) {
				builder.commandTimeout(properties.getTimeout());
			}
			Duration connectTimeout = properties.getConnectTimeout();
			if (connectTimeout != null) {
				options.socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build());
			}
			if (StringUtils.hasText(properties.getClientName())) {
				builder.clientName(properties.getClientName());
			}
		}
		options.timeoutOptions(TimeoutOptions.enabled());
		return builder.clientOptions(options.build()).build();
	}

	private static ClientOptions.Builder clusterOptions(@Nullable DataRedisProperties properties) {
		ClusterTopologyRefreshOptions.Builder refresh = ClusterTopologyRefreshOptions.builder();
		if (properties != null) {
			DataRedisProperties.Lettuce.Cluster.Refresh settings = properties.getLettuce().getCluster().getRefresh();
			refresh.dynamicRefreshSources(settings.isDynamicRefreshSources());
			if (settings.getPeriod() != null) {
				refresh.enablePeriodicRefresh(settings.getPeriod());
			}
		}
		return ClusterClientOptions.builder().topologyRefreshOptions(refresh.build());
	}

	private static SslOptions sslOptions(SslBundle bundle) {
		SslOptions.Builder builder = SslOptions.builder()
			.keyManager(bundle.getManagers().getKeyManagerFactory())
			.trustManager(bundle.getManagers().getTrustManagerFactory());
		if (bundle.getOptions().getCiphers() != null) {
			builder.cipherSuites(bundle.getOptions().getCiphers());
		}
		if (bundle.getOptions().getEnabledProtocols() != null) {
			builder.protocols(bundle.getOptions().getEnabledProtocols());
		}
		return builder.build();
	}

	private static List<RedisNode> redisNodes(List<DataRedisConnectionDetails.Node> nodes) {
		return nodes.stream().map((node) -> new RedisNode(node.host(), node.port())).toList();
	}

	private static String describeNodes(Iterable<RedisNode> nodes) {
		List<String> names = new ArrayList<>();
		nodes.forEach((node) -> names.add(node.getHost() + ":" + node.getPort()));
		return names.toString();
	}

	private static String nodes(List<DataRedisConnectionDetails.Node> nodes) {
		return nodes.stream()
			.map((node) -> node.host() + ":" + node.port())
			.collect(Collectors.joining(", ", "[", "]"));
	}

}
