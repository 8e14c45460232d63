package io.lockstep.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One real {@code redis-server} (or Sentinel) process on {@code 127.0.0.1}, with its own
 * temporary folder. Persistence is off ({@code save ""}, {@code appendonly no}) unless
 * extra arguments turn it on (e.g. {@code "--appendonly", "yes"}), so a
 * {@link #restart()} starts empty, or from the node's append-only file in its folder. The
 * process is always stopped by its PID: by {@link #close()}, by the {@link RedisFixture}
 * that started it, or when the JVM exits.
 */
public final class RedisNode implements AutoCloseable {

	static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

	private final RedisBinary binary;

	private final String name;

	private final Path dir;

	private final String sentinelConfig;

	private final List<String> arguments;

	private volatile int port;

	private volatile Process process;

	RedisNode(String name, Path dir, String sentinelConfig, List<String> arguments, RedisBinary binary) {
		this.binary = binary;
		this.name = name;
		this.dir = dir;
		this.sentinelConfig = sentinelConfig;
		this.arguments = List.copyOf(arguments);
	}

	/** A short name for logs and failure messages, e.g. {@code master-1}. */
	public String name() {
		return this.name;
	}

	/** Always {@code 127.0.0.1}. */
	public String host() {
		return "127.0.0.1";
	}

	public int port() {
		return this.port;
	}

	/** {@code redis://127.0.0.1:<port>}. */
	public String uri() {
		return "redis://" + host() + ":" + this.port;
	}

	/** The PID of the current process; a restart gives a new one. */
	public long pid() {
		Process current = this.process;
		if (current == null) {
			throw new IllegalStateException(this + " has not been started");
		}
		return current.pid();
	}

	/** Whether the process is alive (also when paused). */
	public boolean isRunning() {
		Process current = this.process;
		return current != null && current.isAlive();
	}

	/** Sends SIGSTOP: the node stops answering but keeps its connections and data. */
	public RedisNode pause() {
		signal("STOP");
		awaitState('T', true);
		return this;
	}

	/** Sends SIGCONT to a paused node. */
	public RedisNode resume() {
		signal("CONT");
		awaitState('T', false);
		return this;
	}

	/** Sends SIGKILL and waits until the process is gone; data is lost. */
	public void kill() {
		Process current = this.process;
		if (current == null || !current.isAlive()) {
			return;
		}
		current.destroyForcibly();
		try {
			if (!current.waitFor(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException(this + " did not exit after SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while killing " + this, ex);
		}
		finally {
			RedisProcesses.forget(current);
		}
	}

	/**
	 * Kills the process if alive and starts a new one on the same port: empty, or with
	 * the data of its append-only file when started with {@code --appendonly yes}.
	 */
	public RedisNode restart() {
		kill();
		launch(this.port);
		return this;
	}

	/**
	 * Sends one command over a fresh connection and returns the reply ({@code String},
	 * {@code Long}, {@code List<Object>} or {@code null}).
	 * @throws RedisReplyException on an error reply
	 */
	public Object call(String... command) {
		try {
			return Resp.call(host(), this.port, COMMAND_TIMEOUT, command);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(this + " did not answer " + String.join(" ", command), ex);
		}
	}

	/** {@code INFO <section>} parsed into fields. */
	public Map<String, String> info(String section) {
		String text = (String) call("INFO", section);
		return text.lines()
			.filter((line) -> line.contains(":") && !line.startsWith("#"))
			.collect(Collectors.toMap((line) -> line.substring(0, line.indexOf(':')),
					(line) -> line.substring(line.indexOf(':') + 1), (a, b) -> b));
	}

	/**
	 * The server as it names itself in {@code INFO server}, e.g.
	 * {@code valkey-server 8.0.1} ({@code server_name} and {@code valkey_version}) or
	 * {@code redis-server 7.0.15} (Redis has no {@code server_name}; its version is
	 * {@code redis_version}). Valkey also reports a {@code redis_version} (7.2.4 for
	 * Valkey 8), which says nothing of its features: ask {@link #hasCommand(String)}
	 * instead.
	 */
	public String server() {
		Map<String, String> server = info("server");
		String name = server.getOrDefault("server_name", "redis");
		String version = server.getOrDefault(name + "_version", server.get("redis_version"));
		return name + "-server " + version;
	}

	/**
	 * Whether the server knows the command ({@code COMMAND INFO}), e.g.
	 * {@code SSUBSCRIBE} for sharded pub/sub: what a test asks instead of reading a
	 * version string.
	 */
	public boolean hasCommand(String command) {
		Object reply = call("COMMAND", "INFO", command);
		return reply instanceof List<?> list && !list.isEmpty() && list.get(0) != null;
	}

	/** Kills the process and removes its folder. */
	@Override
	public void close() {
		kill();
		RedisProcesses.deleteRecursively(this.dir);
	}

	@Override
	public String toString() {
		return "redis " + this.name + " (127.0.0.1:" + this.port + ")";
	}

	void start(int requestedPort) {
		launch(requestedPort);
	}

	private void launch(int requestedPort) {
		this.port = requestedPort;
		List<String> command = new ArrayList<>();
		command.add(this.binary.path().toString());
		if (this.sentinelConfig != null) {
			command.add(writeSentinelConfig().toString());
			command.add("--sentinel");
			command.addAll(List.of("--port", Integer.toString(requestedPort)));
		}
		else {
			command.addAll(List.of("--port", Integer.toString(requestedPort), "--save", "", "--appendonly", "no"));
		}
		command.addAll(List.of("--bind", "127.0.0.1", "--protected-mode", "no", "--daemonize", "no", "--dir",
				this.dir.toString(), "--logfile", "redis.log"));
		command.addAll(this.arguments);
		try {
			Files.deleteIfExists(this.dir.resolve("redis.log"));
			Process started = new ProcessBuilder(command).directory(this.dir.toFile())
				.redirectErrorStream(true)
				.redirectOutput(this.dir.resolve("stdout.log").toFile())
				.start();
			this.process = started;
			RedisProcesses.register(started, this.dir, requestedPort, this.binary);
			awaitReady(started);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot start " + this + ": " + command, ex);
		}
	}

	private Path writeSentinelConfig() {
		Path config = this.dir.resolve("sentinel.conf");
		if (!Files.exists(config)) {
			try {
				Files.writeString(config, this.sentinelConfig, StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return config;
	}

	private void awaitReady(Process started) {
		AtomicReference<Exception> last = new AtomicReference<>();
		try {
			Awaitility.await()
				.atMost(START_TIMEOUT)
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(20))
				.pollInSameThread()
				.until(() -> {
					if (!started.isAlive()) {
						RedisProcesses.forget(started);
						throw new IllegalStateException(
								this + " exited with " + started.exitValue() + " at start-up:\n" + logTail());
					}
					try {
						return "PONG".equals(Resp.call(host(), this.port, Duration.ofMillis(500), "PING"));
					}
					catch (IOException | RedisReplyException ex) {
						last.set(ex);
						return false;
					}
				});
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException("%s did not answer PING within %s (last: %s):%n%s".formatted(this,
					START_TIMEOUT, last.get(), logTail()));
		}
	}

	String logTail() {
		StringBuilder tail = new StringBuilder();
		for (String file : List.of("stdout.log", "redis.log")) {
			Path log = this.dir.resolve(file);
			try {
				if (Files.exists(log)) {
					List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
					lines.subList(Math.max(0, lines.size() - 15), lines.size())
						.forEach((line) -> tail.append(file).append(": ").append(line).append('\n'));
				}
			}
			catch (IOException ex) {
				tail.append(file).append(": unreadable (").append(ex.getMessage()).append(")\n");
			}
		}
		return tail.toString();
	}

	boolean portInUse() {
		return logTail().contains("Address already in use");
	}

	private void signal(String signal) {
		long pid = pid();
		if (!isRunning()) {
			throw new IllegalStateException(this + " is not running; cannot send SIG" + signal);
		}
		signal(pid, signal, toString());
	}

	static void signal(long pid, String signal, String what) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true)
				.start();
			String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + out);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run kill -" + signal + " " + pid, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending SIG" + signal + " to " + what, ex);
		}
	}

	/**
	 * On Linux, waits until {@code /proc/<pid>/stat} shows (or no longer shows) the
	 * state.
	 */
	private void awaitState(char state, boolean expected) {
		Path stat = Path.of("/proc", Long.toString(pid()), "stat");
		if (!Files.exists(stat)) {
			return;
		}
		try {
			Awaitility.await()
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(2))
				.atMost(Duration.ofSeconds(5))
				.until(() -> {
					try {
						String text = Files.readString(stat);
						return (text.charAt(text.lastIndexOf(')') + 2) == state) == expected;
					}
					catch (IOException ex) {
						// the process is gone
						return true;
					}
				});
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException(this + " did not " + (expected ? "stop" : "continue") + " within 5s", ex);
		}
	}

}
