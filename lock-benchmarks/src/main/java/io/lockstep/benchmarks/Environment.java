package io.lockstep.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import io.lettuce.core.RedisClient;
import io.lockstep.LockTemplate;
import org.openjdk.jmh.util.Version;
import org.redisson.Redisson;

import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * The machine and the library versions a run measured, for the report.
 */
final class Environment {

	private Environment() {
	}

	static Map<String, String> machine() {
		Map<String, String> machine = new LinkedHashMap<>();
		machine.put("CPU",
				cpuModel() + ", " + Runtime.getRuntime().availableProcessors() + " cores visible to the JVM");
		machine.put("memory", memory());
		machine.put("OS", System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
				+ System.getProperty("os.arch") + ")");
		machine.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
				+ System.getProperty("java.vm.vendor") + ")");
		return machine;
	}

	static Map<String, String> libraries() {
		Map<String, String> libraries = new LinkedHashMap<>();
		String commit = System.getProperty("lockstep.bench.commit");
		libraries.put("Lockstep", pomVersion("io.lockstep", "lockstep-core", LockTemplate.class)
				+ ((commit != null) ? " @ " + commit : ""));
		libraries.put("Redisson", implementationVersion(Redisson.class));
		libraries.put("Spring Integration (redis)", implementationVersion(RedisLockRegistry.class));
		libraries.put("Spring Data Redis", implementationVersion(RedisTemplate.class));
		libraries.put("Lettuce", implementationVersion(RedisClient.class));
		libraries.put("JMH", Version.getPlainVersion());
		return libraries;
	}

	/** The 1-minute load average from {@code /proc/loadavg}, or "unknown". */
	static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
		}
		catch (IOException | RuntimeException ex) {
			return "unknown";
		}
	}

	private static String cpuModel() {
		try {
			return Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse("unknown CPU");
		}
		catch (IOException ex) {
			return "unknown CPU";
		}
	}

	private static String memory() {
		try {
			return Files.readAllLines(Path.of("/proc/meminfo"))
				.stream()
				.filter((line) -> line.startsWith("MemTotal:"))
				.map((line) -> Long.parseLong(line.replaceAll("\\D", "")) / (1024 * 1024) + " GiB")
				.findFirst()
				.orElse("unknown");
		}
		catch (IOException | RuntimeException ex) {
			return "unknown";
		}
	}

	private static String implementationVersion(Class<?> type) {
		String version = type.getPackage().getImplementationVersion();
		return (version != null) ? version : "unknown";
	}

	private static String pomVersion(String group, String artifact, Class<?> type) {
		String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
		try (InputStream in = type.getResourceAsStream(resource)) {
			if (in != null) {
				Properties properties = new Properties();
				properties.load(in);
				return properties.getProperty("version", "unknown");
			}
		}
		catch (IOException ex) {
			// fall through
		}
		return "unknown";
	}

}
