package io.lockstep.test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The fixture names the server that ran as the server names itself (Valkey or Redis), and
 * tests ask the server for a feature rather than read its version.
 */
class ServerIdentityTests {

	@Test
	void theFixtureNamesTheServerAsItsInfoDoes() {
		try (RedisFixture fixture = new RedisFixture()) {
			RedisNode node = fixture.standalone();
			String redisVersion = node.info("server").get("redis_version");
			String serverName = node.info("server").get("server_name");
			System.out.printf("binary: %s; INFO: server_name=%s redis_version=%s; named: %s%n", fixture.redisBinary(),
					serverName, redisVersion, fixture.server());
			assertThat(fixture.server()).isEqualTo(node.server());
			if ("valkey".equals(serverName)) {
				// Valkey reports a redis_version of its own (7.2.4 for Valkey 8) beside
				// its version
				assertThat(node.server()).isEqualTo("valkey-server " + node.info("server").get("valkey_version"))
					.doesNotContain(redisVersion);
				assertThat(fixture.redisVersion()).startsWith("Valkey server v=");
			}
			else {
				assertThat(serverName).isNull();
				assertThat(node.server()).isEqualTo("redis-server " + redisVersion);
				assertThat(fixture.redisVersion()).startsWith("Redis server v=" + redisVersion);
			}
			assertThat(fixture.server()).as("--version and INFO name the same server")
				.isEqualTo(RedisBinary.get().server());
		}
	}

	@Test
	void hasCommandAsksTheServer() {
		try (RedisFixture fixture = new RedisFixture()) {
			RedisNode node = fixture.standalone();
			assertThat(node.hasCommand("SET")).isTrue();
			assertThat(node.hasCommand("NOSUCHCOMMAND")).isFalse();
			// SSUBSCRIBE came with Redis 7.0 (Valkey has it from its first version)
			boolean sharded = node.hasCommand("SSUBSCRIBE");
			System.out.printf("%s: SSUBSCRIBE %s%n", node.server(), sharded ? "known" : "unknown");
			assertThat(sharded).isEqualTo(!node.server().startsWith("redis-server 6."));
		}
	}

	@Test
	void theEmbeddedRedisIsNamedAsChosenByTheTest() {
		try (RedisFixture fixture = new RedisFixture().useEmbeddedRedis()) {
			fixture.standalone();
			assertThat(fixture.server()).startsWith("redis-server 6.2.");
			assertThat(fixture.server()).isEqualTo(RedisBinary.embedded().server());
		}
	}

	@Test
	void aConfiguredServerThatCannotRunIsAFailureNamingTheProperty(@TempDir Path dir) throws Exception {
		Path missing = dir.resolve("valkey-server");
		assertThatIllegalStateException().isThrownBy(() -> RedisBinary.resolve(missing.toString()))
			.withMessageContaining(RedisBinary.PROPERTY)
			.withMessageContaining(missing.toString());
		Path notExecutable = Files.writeString(dir.resolve("redis-server"), "");
		assertThatIllegalStateException().isThrownBy(() -> RedisBinary.resolve(notExecutable.toString()))
			.withMessageContaining("not executable");
	}

	@Test
	void valkeyPicksValkeyServerFromPathOrFailsSayingThereIsNone() {
		boolean onPath = System.getenv("PATH") != null && Arrays.stream(System.getenv("PATH").split(File.pathSeparator))
			.anyMatch((dir) -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, "valkey-server")));
		if (onPath) {
			RedisBinary valkey = RedisBinary.resolve(RedisBinary.VALKEY);
			System.out.printf("'valkey' picked %s (%s)%n", valkey.path(), valkey.server());
			assertThat(valkey.server()).startsWith("valkey-server ");
			assertThat(valkey.path().getFileName()).hasToString("valkey-server");
		}
		else {
			System.out.println("no valkey-server on PATH: 'valkey' must fail saying so");
			assertThatIllegalStateException().isThrownBy(() -> RedisBinary.resolve(RedisBinary.VALKEY))
				.withMessageContaining("no valkey-server on PATH");
		}
	}

}
