package io.lockstep.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisNode;

/**
 * Shared helpers for the lock tests: Lettuce clients on fixture nodes, templates,
 * counting Redis commands, and spawning a second JVM.
 */
final class TestLocks {

	private TestLocks() {
	}

	static RedisClient client(RedisNode node) {
		return RedisClient.create(RedisURI.create(node.host(), node.port()));
	}

	static RedisLockTemplateBuilder builder(RedisClient client) {
		return RedisLockTemplate.builder(client);
	}

	/** Total calls of every command but INFO, from {@code INFO commandstats}. */
	static long commandCalls(RedisNode node) {
		long total = 0;
		for (Map.Entry<String, String> entry : node.info("commandstats").entrySet()) {
			if (entry.getKey().startsWith("cmdstat_") && !entry.getKey().equals("cmdstat_info")) {
				String calls = entry.getValue().split(",")[0];
				total += Long.parseLong(calls.substring(calls.indexOf('=') + 1));
			}
		}
		return total;
	}

	/** Calls of one command, e.g. {@code evalsha}. */
	static long commandCalls(RedisNode node, String command) {
		String stat = node.info("commandstats").get("cmdstat_" + command);
		if (stat == null) {
			return 0;
		}
		String calls = stat.split(",")[0];
		return Long.parseLong(calls.substring(calls.indexOf('=') + 1));
	}

	/**
	 * Polls a condition (a check, not synchronisation) until it holds or the timeout
	 * passes.
	 */
	static boolean eventually(Duration timeout, BooleanSupplier condition) {
		return Eventually.holds(timeout, condition);
	}

	/** A second JVM running {@link LockWorker} with the test classpath. */
	static final class Jvm implements AutoCloseable {

		private final Process process;

		private final BufferedReader out;

		private final List<String> lines = new ArrayList<>();

		Jvm(String... args) {
			List<String> command = new ArrayList<>();
			command.add(ProcessHandle.current().info().command().orElse("java"));
			command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
					LockWorker.class.getName()));
			command.addAll(List.of(args));
			try {
				this.process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot start a second JVM", ex);
			}
			this.out = new BufferedReader(new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
		}

		/** Reads lines until one starts with {@code prefix}; fails after the timeout. */
		String await(String prefix, Duration timeout) {
			CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
				try {
					String next;
					while ((next = this.out.readLine()) != null) {
						this.lines.add(next);
						if (next.startsWith(prefix)) {
							return next;
						}
					}
					return null;
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			});
			try {
				String result = line.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
				if (result == null) {
					throw new IllegalStateException("Worker JVM ended before '" + prefix + "': " + this.lines);
				}
				return result;
			}
			catch (Exception ex) {
				throw new IllegalStateException(
						"No '" + prefix + "' from the worker JVM within " + timeout + ": " + this.lines, ex);
			}
		}

		void send(String line) {
			try {
				this.process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
				this.process.getOutputStream().flush();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		long pid() {
			return this.process.pid();
		}

		/** SIGKILL, by PID, and wait for the exit. */
		void kill() {
			this.process.destroyForcibly();
			try {
				this.process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		@Override
		public void close() {
			kill();
		}

	}

}
