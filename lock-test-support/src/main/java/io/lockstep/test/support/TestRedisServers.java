package io.lockstep.test.support;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code redis-server} of each {@link TestRedis} test class: started when its context
 * is first created, stopped by PID when the class is done (and, as a last resort, when
 * the JVM exits).
 */
final class TestRedisServers {

	private static final Logger logger = LoggerFactory.getLogger(TestRedisServers.class);

	private static final Map<Class<?>, Server> servers = new ConcurrentHashMap<>();

	private TestRedisServers() {
	}

	/** The server of a test class, started on first use. */
	static RedisNode start(Class<?> testClass, List<String> arguments) {
		return servers.computeIfAbsent(testClass, (key) -> Server.start(key, arguments)).node();
	}

	/** Stops the server of a test class, if it has one. */
	static void stop(Class<?> testClass) {
		Server server = servers.remove(testClass);
		if (server != null) {
			logger.debug("Stopping {} of {} (PID {})", server.node(), testClass.getName(), server.node().pid());
			server.fixture().close();
		}
	}

	/** The running server of a test class, or {@code null}. */
	static RedisNode running(Class<?> testClass) {
		Server server = servers.get(testClass);
		return (server != null) ? server.node() : null;
	}

	private record Server(RedisFixture fixture, RedisNode node) {

		static Server start(Class<?> testClass, List<String> arguments) {
			RedisFixture fixture = new RedisFixture();
			try {
				RedisNode node = fixture.standalone(arguments.toArray(new String[0]));
				logger.info("@TestRedis: {} (PID {}, {}) for {}", node, node.pid(), fixture.server(),
						testClass.getName());
				return new Server(fixture, node);
			}
			catch (RuntimeException ex) {
				fixture.close();
				throw new IllegalStateException(
						"@TestRedis on " + testClass.getName() + " could not start a redis-server: " + ex.getMessage(),
						ex);
			}
		}

	}

}
