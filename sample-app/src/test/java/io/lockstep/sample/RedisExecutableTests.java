package io.lockstep.sample;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample runs the {@code redis-server} installed on the {@code PATH} when there is
 * one, else the embedded-redis jar's, and says which and why.
 */
class RedisExecutableTests {

	@Test
	void prefersTheRedisServerOnThePath(@TempDir Path dir) throws Exception {
		Path empty = Files.createDirectory(dir.resolve("empty"));
		Path bin = Files.createDirectory(dir.resolve("bin"));
		Path server = bin.resolve("redis-server");
		Files.writeString(server, "#!/bin/sh\necho 'Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0'\n");
		assertThat(server.toFile().setExecutable(true)).isTrue();
		RedisExecutable executable = RedisExecutable.find(empty + File.pathSeparator + bin);
		assertThat(executable.installed()).isEqualTo(server.toFile());
		assertThat(executable.provider().get()).isEqualTo(server.toFile());
		assertThat(executable.describe()).isEqualTo("the installed " + server
				+ " (Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0, found on " + "the PATH)");
	}

	@Test
	void fallsBackToTheEmbeddedRedisJarAndSaysWhy(@TempDir Path dir) {
		RedisExecutable executable = RedisExecutable.find(dir.toString());
		assertThat(executable.installed()).isNull();
		assertThat(executable.describe())
			.isEqualTo("the redis-server inside the embedded-redis jar (Redis 6.2; no redis-server on the PATH)");
		assertThat(RedisExecutable.find(null).installed()).isNull();
	}

}
