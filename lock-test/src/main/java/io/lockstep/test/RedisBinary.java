package io.lockstep.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the server binary: the system property {@value #PROPERTY} (or the environment
 * variable {@value #ENVIRONMENT}) when set, else {@code redis-server} on {@code PATH},
 * else the binary shipped inside the {@code com.github.codemonstur:embedded-redis} jar,
 * extracted once to the temporary folder. The property names a {@code redis-server} or a
 * {@code valkey-server} alike; the value {@value #EMBEDDED} picks the jar's binary even
 * when one is on {@code PATH} (CI runs the suite so, as on a machine without Redis), and
 * {@value #VALKEY} picks {@code valkey-server} on {@code PATH}. A binary the property
 * names that cannot be run fails every test that needs it; it never falls back to
 * another.
 */
final class RedisBinary {

	static final String PROPERTY = "lockstep.test.redis-server";

	static final String ENVIRONMENT = "LOCKSTEP_REDIS_SERVER";

	/** The value of {@value #PROPERTY} that picks the embedded-redis jar's binary. */
	static final String EMBEDDED = "embedded";

	/** The value of {@value #PROPERTY} that picks {@code valkey-server} on PATH. */
	static final String VALKEY = "valkey";

	private static final Pattern SERVER_VERSION = Pattern.compile("^(\\w+) server v=(\\S+)");

	private static final Logger logger = LoggerFactory.getLogger(RedisBinary.class);

	private static volatile RedisBinary resolved;

	private final Path path;

	private final String source;

	private final String version;

	private RedisBinary(Path path, String source) {
		this.path = path;
		this.source = source;
		this.version = readVersion(path);
	}

	static RedisBinary get() {
		RedisBinary binary = resolved;
		if (binary == null) {
			synchronized (RedisBinary.class) {
				binary = resolved;
				if (binary == null) {
					binary = resolve(System.getProperty(PROPERTY, System.getenv(ENVIRONMENT)));
					logger.info("redis-server for tests: {} ({}, {})", binary.path, binary.source, binary.version);
					resolved = binary;
				}
			}
		}
		return binary;
	}

	private static volatile RedisBinary embedded;

	/** The Redis 6.2 binary of the embedded-redis jar, whatever is on PATH. */
	static RedisBinary embedded() {
		RedisBinary binary = embedded;
		if (binary == null) {
			synchronized (RedisBinary.class) {
				binary = embedded;
				if (binary == null) {
					String resource = embeddedResourceName();
					if (resource == null) {
						throw new IllegalStateException("The embedded-redis jar has no binary for "
								+ System.getProperty("os.name") + "/" + System.getProperty("os.arch"));
					}
					binary = new RedisBinary(extract(resource), "embedded-redis jar");
					embedded = binary;
				}
			}
		}
		return binary;
	}

	Path path() {
		return this.path;
	}

	String source() {
		return this.source;
	}

	String version() {
		return this.version;
	}

	/**
	 * The server and its version as {@code --version} names them, e.g.
	 * {@code valkey-server 8.0.1} or {@code redis-server 7.0.15}.
	 */
	String server() {
		Matcher matcher = SERVER_VERSION.matcher(this.version);
		return matcher.find() ? matcher.group(1).toLowerCase(Locale.ROOT) + "-server " + matcher.group(2)
				: this.version;
	}

	/** The binary the value of {@value #PROPERTY} (or {@code null}) names. */
	static RedisBinary resolve(String configured) {
		if (EMBEDDED.equals(configured)) {
			return embedded();
		}
		if (VALKEY.equals(configured)) {
			Path valkey = findOnPath("valkey-server");
			if (valkey == null) {
				throw new IllegalStateException(PROPERTY + "/" + ENVIRONMENT + " is '" + VALKEY
						+ "' but there is no valkey-server on PATH; install one (e.g. Debian's valkey-server "
						+ "package) or set -D" + PROPERTY + "=/path/to/valkey-server");
			}
			return new RedisBinary(valkey, "configured");
		}
		if (configured != null && !configured.isBlank()) {
			Path path = Path.of(configured);
			if (!Files.isExecutable(path)) {
				throw new IllegalStateException(
						"The server set by " + PROPERTY + "/" + ENVIRONMENT + " is not executable: " + path);
			}
			return new RedisBinary(path, "configured");
		}
		Path onPath = findOnPath("redis-server");
		if (onPath != null) {
			return new RedisBinary(onPath, "PATH");
		}
		String resource = embeddedResourceName();
		if (resource == null) {
			throw new IllegalStateException("No redis-server for tests: none on PATH and the embedded-redis jar has no "
					+ "binary for " + System.getProperty("os.name") + "/" + System.getProperty("os.arch")
					+ ". Install one (e.g. 'apt-get install redis-server') or set -D" + PROPERTY
					+ "=/path/to/redis-server");
		}
		return new RedisBinary(extract(resource), "embedded-redis jar");
	}

	private static Path findOnPath(String name) {
		String path = System.getenv("PATH");
		if (path == null) {
			return null;
		}
		for (String dir : path.split(File.pathSeparator)) {
			if (dir.isEmpty()) {
				continue;
			}
			Path candidate = Path.of(dir, name);
			if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
				return candidate;
			}
		}
		return null;
	}

	private static String embeddedResourceName() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
		boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
		if (os.contains("linux")) {
			return x64 ? "redis-server-6.2.6-v5-linux-amd64" : (arm64 ? "redis-server-6.2.7-linux-arm64" : null);
		}
		if (os.contains("mac")) {
			return x64 ? "redis-server-6.2.6-v5-darwin-amd64" : (arm64 ? "redis-server-6.2.6-v5-darwin-arm64" : null);
		}
		return null;
	}

	private static Path extract(String resource) {
		Path target = Path.of(System.getProperty("java.io.tmpdir"), "lockstep-redis-bin", resource);
		if (Files.isExecutable(target)) {
			return target;
		}
		try (InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No redis-server for tests: none on PATH and resource '" + resource
						+ "' is missing; is com.github.codemonstur:embedded-redis on the test classpath?");
			}
			Files.createDirectories(target.getParent());
			Path temporary = Files.createTempFile(target.getParent(), resource, ".part");
			Files.copy(in, temporary, StandardCopyOption.REPLACE_EXISTING);
			if (!temporary.toFile().setExecutable(true, false)) {
				throw new IllegalStateException("Cannot make " + temporary + " executable");
			}
			Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
			return target;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot extract " + resource + " to " + target, ex);
		}
	}

	private static String readVersion(Path path) {
		try {
			Process process = new ProcessBuilder(path.toString(), "--version").redirectErrorStream(true).start();
			String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
				process.destroyForcibly();
				throw new IllegalStateException(path + " --version failed: " + out);
			}
			return out;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + path + " --version", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running " + path + " --version", ex);
		}
	}

}
