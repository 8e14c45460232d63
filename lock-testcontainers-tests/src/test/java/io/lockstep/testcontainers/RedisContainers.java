package io.lockstep.testcontainers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis (or Valkey) container that listens on 127.0.0.1 of the host network, so it
 * works with an engine started with {@code --bridge=none} (where port mapping is silently
 * ignored).
 *
 * <p>
 * System properties: {@value #IMAGE_PROPERTY} (default {@value #DEFAULT_IMAGE}) names the
 * image; {@value #COMMAND_PROPERTY} (default {@value #DEFAULT_COMMAND}) the server it
 * runs, on the image's {@code PATH} ({@code valkey-server} for a Valkey image);
 * {@value #PULL_PROPERTY}{@code =false} never pulls the image (for an engine without a
 * registry, with a locally built image).
 */
final class RedisContainers {

	static final String IMAGE_PROPERTY = "lockstep.test.redis-image";

	static final String PULL_PROPERTY = "lockstep.test.pull-image";

	static final String COMMAND_PROPERTY = "lockstep.test.redis-command";

	static final String DEFAULT_COMMAND = "redis-server";

	static final String DEFAULT_IMAGE = "redis:7.4";

	private RedisContainers() {
	}

	/**
	 * A container (not started) running the server on 127.0.0.1:{@code port}; Redis and
	 * Valkey both log "Ready to accept connections" once they do.
	 */
	static GenericContainer<?> onHostNetwork(int port) {
		DockerImageName image = DockerImageName.parse(System.getProperty(IMAGE_PROPERTY, DEFAULT_IMAGE));
		GenericContainer<?> container = new GenericContainer<>(image).withNetworkMode("host")
			.withCommand(System.getProperty(COMMAND_PROPERTY, DEFAULT_COMMAND), "--port", String.valueOf(port),
					"--bind", "127.0.0.1", "--protected-mode", "no")
			.waitingFor(Wait.forLogMessage(".*Ready to accept connections.*", 1)
				.withStartupTimeout(Duration.ofSeconds(60)));
		if (!Boolean.parseBoolean(System.getProperty(PULL_PROPERTY, "true"))) {
			container.withImagePullPolicy((name) -> false);
		}
		return container;
	}

	/** A TCP port free on 127.0.0.1 now. */
	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot find a free port on 127.0.0.1", ex);
		}
	}

}
