package io.lockstep.sample;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import redis.embedded.core.ExecutableProvider;

/**
 * Which {@code redis-server} the sample starts when no Redis is configured: the one
 * installed on the {@code PATH} when there is one (e.g. Debian's 7.0), else the one
 * shipped inside the embedded-redis jar (6.2). {@link #describe()} says which ran and
 * why, for the start-up log.
 *
 * @param installed the {@code redis-server} found on the {@code PATH}, or {@code null}
 */
record RedisExecutable(File installed) {

	/** The {@code redis-server} on the {@code PATH}, else the embedded-redis jar's. */
	static RedisExecutable find(String path) {
		if (path != null) {
			for (String directory : path.split(File.pathSeparator)) {
				File candidate = new File(directory, "redis-server");
				if (!directory.isEmpty() && candidate.isFile() && candidate.canExecute()) {
					return new RedisExecutable(candidate);
				}
			}
		}
		return new RedisExecutable(null);
	}

	ExecutableProvider provider() {
		return (this.installed != null) ? () -> this.installed : ExecutableProvider.newJarResourceProvider();
	}

	String describe() {
		if (this.installed == null) {
			return "the redis-server inside the embedded-redis jar (Redis 6.2; no redis-server on the PATH)";
		}
		return "the installed " + this.installed + " (" + version(this.installed) + ", found on the PATH)";
	}

	private static String version(File binary) {
		try {
			Process process = new ProcessBuilder(binary.getPath(), "--version").redirectErrorStream(true).start();
			try (BufferedReader output = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				String line = output.readLine();
				process.waitFor(5, TimeUnit.SECONDS);
				return (line != null) ? line.trim() : "version unknown";
			}
		}
		catch (IOException ex) {
			return "version unknown";
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "version unknown";
		}
	}

}
