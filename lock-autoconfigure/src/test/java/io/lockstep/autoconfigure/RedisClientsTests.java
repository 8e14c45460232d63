package io.lockstep.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.AbstractRedisClient;

import io.lockstep.LockException;
import io.lockstep.LockTemplate;
import io.lockstep.test.Cluster;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.lockstep.test.Sentinels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.config.Config;
import org.redisson.spring.data.connection.RedissonConnectionFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Lockstep in applications whose Redis client is not Lettuce: it opens its own Lettuce
 * client from Spring Boot's {@link DataRedisConnectionDetails} and closes it with the
 * context; the application's own connection factory stays the only one and keeps working.
 * Each test starts a context and locks against a real {@code redis-server}.
 */
@RedisTest
class RedisClientsTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@Test
	void locksInAnApplicationOnJedis(RedisNode redis) {
		AtomicReference<AbstractRedisClient> own = new AtomicReference<>();
		this.contextRunner
			.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.port=" + redis.port())
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).getBean(RedisConnectionFactory.class).isInstanceOf(JedisConnectionFactory.class);
				LockstepRedisClient client = context.getBean(LockstepRedisClient.class);
				assertThat(client.isOwn()).isTrue();
				own.set(client.connectionFactory().getRequiredNativeClient());
				locksOn(redis, context, "jedis");
			});
		assertOnlyTheTestIsConnected(redis);
		assertThat(own.get().getResources().eventExecutorGroup().isShuttingDown())
			.as("Lockstep's own client shut down with the context")
			.isTrue();
	}

	@Test
	void startsOnJedisWhileRedisIsDownAndLocksOnceItIsBack(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		redis.kill();
		this.contextRunner
			.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.port=" + redis.port(),
					"lockstep.wait-time=0s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = context.getBean(LockTemplate.class);
				// refused, or not answered within the command timeout on a loaded machine
				assertThatExceptionOfType(LockException.class)
					.isThrownBy(() -> locks.tryExecute("down", (lock) -> "ran"))
					.withMessageContaining("lockstep:down");
				redis.restart();
				boolean locked = Eventually.holds(Duration.ofSeconds(20), () -> {
					try {
						return locks.tryExecute("down", (lock) -> "ran").isPresent();
					}
					catch (LockException ex) {
						return false;
					}
				});
				assertThat(locked).as("locked once Redis is back, without a restart").isTrue();
			});
	}

	@Test
	void locksInAnApplicationOnRedissonsConnectionFactory(RedisNode redis) {
		Config redisson = new Config();
		redisson.useSingleServer().setAddress("redis://127.0.0.1:" + redis.port());
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port())
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new RedissonConnectionFactory(redisson))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).getBean(RedisConnectionFactory.class).isInstanceOf(RedissonConnectionFactory.class);
				locksOn(redis, context, "redisson");
			});
		assertOnlyTheTestIsConnected(redis);
	}

	@Test
	void locksWhereTheApplicationsOwnConnectionDetailsPoint(RedisNode redis) {
		// spring.data.redis.port points nowhere: only the details bean knows the server
		for (String clientType : List.of("jedis", "lettuce")) {
			this.contextRunner
				.withPropertyValues("spring.data.redis.client-type=" + clientType,
						"spring.data.redis.port=" + unusedPort(redis))
				.withBean(DataRedisConnectionDetails.class, () -> standalone(redis.port()))
				.run((context) -> {
					assertThat(context).hasNotFailed();
					assertThat(context.getBean(LockstepRedisClient.class).isOwn())
						.isEqualTo(!clientType.equals("lettuce"));
					locksOn(redis, context, "details-" + clientType);
				});
		}
		assertOnlyTheTestIsConnected(redis);
	}

	@Test
	void sharesTheClientOfALettuceConnectionFactory(RedisNode redis) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			assertThat(context).getBean(RedisConnectionFactory.class).isInstanceOf(LettuceConnectionFactory.class);
			assertThat(context.getBean(LockstepRedisClient.class).isOwn()).isFalse();
			locksOn(redis, context, "lettuce");
		});
	}

	@Test
	void logsInWithTheAclUserOfTheConnectionDetails(RedisFixture fixture) {
		RedisNode redis = fixture.standalone();
		redis.call("ACL", "SETUSER", "locker", "on", ">secret", "~*", "&*", "+@all");
		this.contextRunner
			.withPropertyValues("spring.data.redis.client-type=jedis", "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.username=locker", "spring.data.redis.password=secret")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = context.getBean(LockTemplate.class);
				List<String> users = locks.execute("acl",
						(lock) -> Arrays.stream(((String) redis.call("CLIENT", "LIST")).split("\n"))
							.filter((line) -> !line.contains("cmd=client"))
							.map((line) -> line.replaceAll(".* user=(\\S+).*", "$1").trim())
							.toList());
				assertThat(users).as("users of the connections other than the test's")
					.isNotEmpty()
					.containsOnly("locker");
			});
	}

	@Test
	void connectsOverTlsWithTheSslBundleOfTheConnectionDetails(RedisNode redis, @TempDir Path dir) throws Exception {
		Path keyStore = dir.resolve("redis.p12");
		Path trustStore = dir.resolve("trust.p12");
		Path certificate = dir.resolve("redis.crt");
		keytool("-genkeypair", "-alias", "redis", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
				"-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12", "-keystore",
				keyStore.toString(), "-storepass", "secret", "-keypass", "secret");
		keytool("-exportcert", "-alias", "redis", "-keystore", keyStore.toString(), "-storepass", "secret", "-file",
				certificate.toString());
		keytool("-importcert", "-noprompt", "-alias", "redis", "-file", certificate.toString(), "-storetype", "PKCS12",
				"-keystore", trustStore.toString(), "-storepass", "secret");
		try (TlsProxy tls = new TlsProxy(keyStore, "secret".toCharArray(), redis.port())) {
			this.contextRunner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
				// a first TLS handshake on a loaded machine may take more than the
				// default wait
				.withPropertyValues("lockstep.wait-time=20s", "spring.data.redis.client-type=jedis",
						"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + tls.port(),
						"spring.data.redis.ssl.enabled=true", "spring.data.redis.ssl.bundle=redis",
						"spring.ssl.bundle.jks.redis.truststore.location=file:" + trustStore,
						"spring.ssl.bundle.jks.redis.truststore.password=secret",
						"spring.ssl.bundle.jks.redis.truststore.type=PKCS12")
				.run((context) -> {
					assertThat(context).hasNotFailed();
					LockTemplate locks = context.getBean(LockTemplate.class);
					// the lock client connects while the context starts
					// (LockClientWarmUp)
					assertThat(tls.handshakes()).as("TLS handshakes of Lockstep's own client at start-up").isPositive();
					Object held = locks.execute("tls", (lock) -> redis.call("EXISTS", lock.key()));
					assertThat(held).as("lock key on the server while held, through the TLS front").isEqualTo(1L);
				});
		}
	}

	private static void keytool(String... arguments) throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
		command.addAll(List.of(arguments));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes());
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("keytool done").isTrue();
		assertThat(process.exitValue()).as("keytool %s: %s", arguments[0], output).isZero();
	}

	@Test
	void locksOnTheMasterOfSentinelConnectionDetails(RedisFixture fixture) {
		Sentinels sentinels = fixture.sentinels(1, 3);
		List<DataRedisConnectionDetails.Node> nodes = sentinels.sentinels()
			.stream()
			.map((node) -> new DataRedisConnectionDetails.Node(node.host(), node.port()))
			.toList();
		DataRedisConnectionDetails details = new DataRedisConnectionDetails() {

			@Override
			public Sentinel getSentinel() {
				return new Sentinel() {

					@Override
					public int getDatabase() {
						return 0;
					}

					@Override
					public String getMaster() {
						return Sentinels.MASTER_NAME;
					}

					@Override
					public List<Node> getNodes() {
						return nodes;
					}

					@Override
					public String getUsername() {
						return null;
					}

					@Override
					public String getPassword() {
						return null;
					}

				};
			}

		};
		this.contextRunner.withPropertyValues("spring.data.redis.client-type=jedis")
			.withBean(DataRedisConnectionDetails.class, () -> details)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				locksOn(sentinels.master(), context, "sentinel");
			});
	}

	@Test
	void locksOnTheClusterOfClusterConnectionDetails(RedisFixture fixture) {
		Cluster cluster = fixture.cluster(3, 0);
		List<DataRedisConnectionDetails.Node> nodes = cluster.masters()
			.stream()
			.map((node) -> new DataRedisConnectionDetails.Node(node.host(), node.port()))
			.toList();
		DataRedisConnectionDetails details = new DataRedisConnectionDetails() {

			@Override
			public Cluster getCluster() {
				return () -> nodes;
			}

		};
		this.contextRunner.withPropertyValues("spring.data.redis.client-type=jedis")
			.withBean(DataRedisConnectionDetails.class, () -> details)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate locks = context.getBean(LockTemplate.class);
				List<String> keys = List.of("order:1", "order:2", "order:3", "order:4");
				long held = locks.executeAll(keys, (lock) -> cluster.masters()
					.stream()
					.mapToLong((master) -> keys.stream()
						.filter((key) -> master.call("KEYS", "*" + key) instanceof List<?> found && !found.isEmpty())
						.count())
					.sum());
				assertThat(held).as("lock keys found on the Cluster's masters while held").isEqualTo(keys.size());
			});
		for (RedisNode master : cluster.masters()) {
			assertOnlyTheTestIsConnected(master);
		}
	}

	@Test
	void refusesStaticMasterReplicaConnectionDetailsNamingTheProperty(RedisNode redis) {
		// Jedis refuses them itself; another client may not
		Config redisson = new Config();
		redisson.useSingleServer().setAddress("redis://127.0.0.1:" + redis.port());
		this.contextRunner.withPropertyValues("spring.data.redis.masterreplica.nodes=127.0.0.1:" + redis.port())
			.withBean("redisConnectionFactory", RedisConnectionFactory.class,
					() -> new RedissonConnectionFactory(redisson))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("spring.data.redis.masterreplica.nodes")
				.hasMessageContaining("127.0.0.1:" + redis.port()));
	}

	@Test
	void failsStartUpNamingWhatIsMissingWithoutConnectionDetails(RedisNode redis) {
		// Lockstep cannot read where Redisson's factory points (it can a Jedis factory's)
		Config redisson = new Config();
		redisson.useSingleServer().setAddress("redis://127.0.0.1:" + redis.port());
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
			.withBean(RedisConnectionFactory.class, () -> new RedissonConnectionFactory(redisson))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("RedissonConnectionFactory")
				.hasMessageContaining("DataRedisConnectionDetails"));
	}

	@Test
	void failsStartUpNamingConnectionDetailsThatNameNoServer(RedisNode redis) {
		Config redisson = new Config();
		redisson.useSingleServer().setAddress("redis://127.0.0.1:" + redis.port());
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LockstepAutoConfiguration.class))
			.withBean(RedisConnectionFactory.class, () -> new RedissonConnectionFactory(redisson))
			.withBean(DataRedisConnectionDetails.class, NoServerConnectionDetails::new)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining(NoServerConnectionDetails.class.getName())
				.hasMessageContaining("names no standalone server, Sentinel or Cluster"));
	}

	/** Connection details of the application's own that leave every server out. */
	static class NoServerConnectionDetails implements DataRedisConnectionDetails {

	}

	/**
	 * Takes a lock through the context's {@link LockTemplate} and checks its key on the
	 * given server while it is held and after; the application's own template works
	 * beside it.
	 */
	static void locksOn(RedisNode redis, AssertableApplicationContext context, String key) {
		assertThat(context).hasSingleBean(RedisConnectionFactory.class);
		LockTemplate locks = context.getBean(LockTemplate.class);
		long token = locks.execute(key, (lock) -> {
			assertThat(redis.call("EXISTS", lock.key())).as("lock key on the server while held").isEqualTo(1L);
			return lock.fencingToken();
		});
		assertThat(token).isPositive();
		assertThat(redis.call("EXISTS", "lockstep:" + key)).as("lock key after release").isEqualTo(0L);
		context.getBean(StringRedisTemplate.class).opsForValue().set("app:" + key, "written by the application");
		assertThat(redis.call("GET", "app:" + key)).isEqualTo("written by the application");
	}

	/** Every client the context opened is closed with it. */
	static void assertOnlyTheTestIsConnected(RedisNode redis) {
		boolean closed = Eventually.holds(Duration.ofSeconds(5),
				() -> "1".equals(redis.info("clients").get("connected_clients")));
		assertThat(closed)
			.as("only the test's own connection left after the context closed; clients: %s",
					redis.call("CLIENT", "LIST"))
			.isTrue();
	}

	private static DataRedisConnectionDetails standalone(int port) {
		return new DataRedisConnectionDetails() {

			@Override
			public Standalone getStandalone() {
				return Standalone.of("127.0.0.1", port);
			}

		};
	}

	private static int unusedPort(RedisNode redis) {
		return redis.port() + 1;
	}

}
