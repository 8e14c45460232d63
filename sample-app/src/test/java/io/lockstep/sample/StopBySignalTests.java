package io.lockstep.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documented stop (Ctrl+C, or SIGTERM: {@code kill <pid>}) ends the sample's JVM with
 * exit code 0 once it has shut down gracefully, so {@code ./mvnw … spring-boot:run} ends
 * with BUILD SUCCESS rather than reporting the signal ({@code 143} = 128 + SIGTERM) as a
 * failure. The sample runs as its own JVM, as {@code spring-boot:run} forks it, and gets
 * a real SIGTERM.
 */
class StopBySignalTests {

	@Test
	void sigtermStopsTheSampleGracefullyWithExitCodeZero() throws Exception {
		Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
		Process process = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
				SampleApplication.class.getName(), "--server.port=0", "--sample.report-interval=1h",
				"--spring.main.banner-mode=off")
			.redirectErrorStream(true)
			.start();
		StringBuilder output = new StringBuilder();
		CountDownLatch started = new CountDownLatch(1);
		Thread reader = new Thread(() -> {
			try (BufferedReader lines = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				for (String line = lines.readLine(); line != null; line = lines.readLine()) {
					synchronized (output) {
						output.append(line).append('\n');
					}
					if (line.contains("Started SampleApplication")) {
						started.countDown();
					}
				}
			}
			catch (Exception ex) {
				// the process ended
			}
		}, "sample-output");
		reader.start();
		try {
			assertThat(started.await(120, TimeUnit.SECONDS)).as("the sample started; its output:%n%s", output).isTrue();
			// kill, not Process.destroy(): that also closes the streams, and the log of
			// the
			// shutdown would be lost
			Process kill = new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).inheritIO().start();
			assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("SIGTERM sent").isTrue();
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the sample stopped").isTrue();
			reader.join(10_000);
			String log;
			synchronized (output) {
				log = output.toString();
			}
			System.out.printf("exit code after SIGTERM: %d; last lines:%n%s%n", process.exitValue(),
					String.join("\n", lastLines(log, 6)));
			assertThat(process.exitValue()).as("exit code after SIGTERM; output:%n%s", log).isZero();
			assertThat(log).contains("Commencing graceful shutdown").contains("Stopped the embedded Redis");
			assertThat(log).contains("No spring.data.redis.* configured: started "
					+ RedisExecutable.find(System.getenv("PATH")).describe());
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static List<String> lastLines(String log, int count) {
		List<String> lines = log.lines().toList();
		return lines.subList(Math.max(0, lines.size() - count), lines.size());
	}

}
