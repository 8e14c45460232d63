package io.lockstep.test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every {@code redis-server} process this JVM started, so that none outlives it: live
 * ones are killed by PID when the JVM exits, and the folders (with a {@code node.pid}
 * file) of a JVM that died without cleaning up are reaped by the next one.
 */
public final class RedisProcesses {

	private static final Logger logger = LoggerFactory.getLogger(RedisProcesses.class);

	private static final String DIR_PREFIX = "lockstep-redis-";

	private static final Pattern DIR_PATTERN = Pattern.compile(DIR_PREFIX + "(\\d+)-.*");

	private static final Map<Process, Path> live = new ConcurrentHashMap<>();

	static {
		reapOrphans();
		Runtime.getRuntime().addShutdownHook(new Thread(RedisProcesses::killAll, "lockstep-redis-cleanup"));
	}

	private RedisProcesses() {
	}

	/** PIDs of the processes this JVM started that are still alive. */
	public static Set<Long> livePids() {
		return live.keySet().stream().filter(Process::isAlive).map(Process::pid).collect(Collectors.toSet());
	}

	static Path createDir(String name) {
		try {
			return Files.createTempDirectory(DIR_PREFIX + ProcessHandle.current().pid() + "-" + name + "-");
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot create a temporary folder for redis " + name, ex);
		}
	}

	static void register(Process process, Path dir, int port, RedisBinary binary) throws IOException {
		live.put(process, dir);
		String record = process.pid() + "\n" + port + "\n" + binary.path().toRealPath() + "\n";
		Files.writeString(dir.resolve("node.pid"), record, StandardCharsets.UTF_8);
	}

	static void forget(Process process) {
		live.remove(process);
	}

	static void killAll() {
		live.keySet().forEach(Process::destroyForcibly);
		live.forEach((process, dir) -> {
			try {
				process.waitFor();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			deleteRecursively(dir);
		});
		live.clear();
	}

	/**
	 * Kills processes left by JVMs that are gone: only the recorded PID, only if it is
	 * still that redis.
	 */
	private static void reapOrphans() {
		Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
		try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, DIR_PREFIX + "*")) {
			for (Path dir : dirs) {
				Matcher matcher = DIR_PATTERN.matcher(dir.getFileName().toString());
				if (!matcher.matches() || ProcessHandle.of(Long.parseLong(matcher.group(1))).isPresent()) {
					continue;
				}
				killRecorded(dir.resolve("node.pid"));
				deleteRecursively(dir);
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Could not reap redis-server processes left by earlier test JVMs", ex);
		}
	}

	private static void killRecorded(Path pidFile) throws IOException {
		if (!Files.exists(pidFile)) {
			return;
		}
		List<String> record = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
		if (record.size() < 3) {
			return;
		}
		long pid = Long.parseLong(record.get(0).trim());
		String command = record.get(2).trim();
		ProcessHandle.of(pid)
			.filter((handle) -> handle.info().command().map(command::equals).orElse(false))
			.ifPresent((handle) -> {
				logger.warn("Killing redis-server PID {} left by an earlier test JVM ({})", pid, pidFile.getParent());
				handle.destroyForcibly();
			});
	}

	static void deleteRecursively(Path dir) {
		if (dir == null || !Files.exists(dir)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			logger.debug("Could not delete {}", dir, ex);
		}
	}

}
