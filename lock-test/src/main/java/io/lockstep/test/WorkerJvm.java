package io.lockstep.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running a test's main class with the test classpath, driven by lines on
 * its stdin and stdout; for tests where the lock holder itself is killed or stopped. It
 * is signalled and stopped by its PID only. Its stdout is read for its whole life (so a
 * full pipe never blocks it) and echoed with a {@code [worker <pid>]} prefix, so that its
 * own log lines (a lease lost, a renewal that failed) show in the test's output.
 */
public final class WorkerJvm implements AutoCloseable {

	private final Process process;

	/** Every line the worker wrote so far; guarded by itself. */
	private final List<String> lines = new ArrayList<>();

	/** Lines before this index were consumed by {@link #await}; guarded by lines. */
	private int consumed;

	/** Whether the worker's stdout ended; guarded by lines. */
	private boolean ended;

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
		Thread reader = new Thread(this::readOutput, "worker-jvm-" + this.process.pid() + "-out");
		reader.setDaemon(true);
		reader.start();
	}

	private void readOutput() {
		String prefix = "[worker " + this.process.pid() + "] ";
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String next;
			while ((next = out.readLine()) != null) {
				System.out.println(prefix + next);
				synchronized (this.lines) {
					this.lines.add(next);
					this.lines.notifyAll();
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// the worker was killed while we read: its output ends here
		}
		finally {
			synchronized (this.lines) {
				this.ended = true;
				this.lines.notifyAll();
			}
		}
	}

	/**
	 * Waits for the next line (after those an earlier call returned) that starts with
	 * {@code prefix}; fails after the timeout, or when the worker ended without it.
	 */
	public String await(String prefix, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.lines) {
			while (true) {
				for (int i = this.consumed; i < this.lines.size(); i++) {
					if (this.lines.get(i).startsWith(prefix)) {
						this.consumed = i + 1;
						return this.lines.get(i);
					}
				}
				if (this.ended) {
					throw new IllegalStateException("Worker JVM ended before '" + prefix + "': " + this.lines);
				}
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					throw new IllegalStateException(
							"No '" + prefix + "' from the worker JVM within " + timeout + ": " + this.lines);
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.lines, left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while waiting for '" + prefix + "'", ex);
				}
			}
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
