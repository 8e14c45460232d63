package io.lockstep.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running a test's main class with the test classpath, driven by lines on
 * its stdin and stdout; for tests where the lock holder itself is killed or stopped. It
 * is signalled and stopped by its PID only.
 */
public final class WorkerJvm implements AutoCloseable {

	private final Process process;

	private final BufferedReader out;

	private final List<String> lines = new ArrayList<>();

	/** Starts {@code mainClass} with {@code args} in a small JVM. */
	public WorkerJvm(Class<?> mainClass, String... args) {
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current().info().command().orElse("java"));
		command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
				mainClass.getName()));
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
	public String await(String prefix, Duration timeout) {
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

	/** Writes one line to the worker's stdin. */
	public void send(String line) {
		try {
			this.process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
			this.process.getOutputStream().flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	public long pid() {
		return this.process.pid();
	}

	/** SIGSTOP, by PID: the whole JVM stops, as in a long stop-the-world pause. */
	public void pause() {
		RedisNode.signal(pid(), "STOP", "worker JVM " + pid());
	}

	/** SIGCONT, by PID. */
	public void resume() {
		RedisNode.signal(pid(), "CONT", "worker JVM " + pid());
	}

	/** SIGKILL, by PID, and wait for the exit. */
	public void kill() {
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
