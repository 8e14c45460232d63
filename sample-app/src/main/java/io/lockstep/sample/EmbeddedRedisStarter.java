package io.lockstep.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.RedisServer;

import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts a {@code redis-server} (the one on the {@code PATH} when installed, else the one
 * inside the embedded-redis jar: see {@link RedisExecutable}) on a free 127.0.0.1 port
 * when the environment configures no Redis ({@code spring.data.redis.url}, {@code .host},
 * {@code .port}, {@code .sentinel.master} or {@code .cluster.nodes}), and stops it last
 * when the application closes: after the web server has let the requests in flight finish
 * (graceful shutdown) and after every bean, the lock client included, was destroyed. It
 * is registered as the context's first disposable bean, and the context destroys those in
 * reverse order. {@code sample.embedded-redis=false} turns this off. Ahead-of-time
 * processing ({@code process-aot}) starts none: it only prepares the context, which
 * connects to nothing.
 */
class EmbeddedRedisStarter implements ApplicationListener<ApplicationEvent> {

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedRedisStarter.class);

	private static final String[] REDIS_PROPERTIES = { "spring.data.redis.url", "spring.data.redis.host",
			"spring.data.redis.port", "spring.data.redis.sentinel.master", "spring.data.redis.cluster.nodes" };

	private static final String DISPOSABLE_NAME = "lockstepSampleEmbeddedRedis";

	private RedisServer server;

	@Override
	public void onApplicationEvent(ApplicationEvent event) {
		if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
			start(prepared.getEnvironment());
		}
		else if (event instanceof ApplicationPreparedEvent prepared) {
			stopWhenDestroyed(prepared.getApplicationContext());
		}
		else if (event instanceof ApplicationFailedEvent) {
			stop();
		}
	}

	private synchronized void start(ConfigurableEnvironment environment) {
		if (this.server != null || !environment.getProperty("sample.embedded-redis", Boolean.class, true)
				|| Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
			return;
		}
		for (String property : REDIS_PROPERTIES) {
			if (environment.containsProperty(property)) {
				logger.info("Using the configured Redis ({} is set)", property);
				return;
			}
		}
		int port = freePort();
		RedisExecutable executable = RedisExecutable.find(System.getenv("PATH"));
		try {
			RedisServer started = RedisServer.newRedisServer()
				.executableProvider(executable.provider())
				.bind("127.0.0.1")
				.port(port)
				.setting("save \"\"")
				.setting("appendonly no")
				.build();
			started.start();
			this.server = started;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start the embedded Redis on 127.0.0.1:" + port, ex);
		}
		environment.getPropertySources()
			.addFirst(new MapPropertySource("embeddedRedis",
					Map.of("spring.data.redis.host", "127.0.0.1", "spring.data.redis.port", port)));
		logger.info("No spring.data.redis.* configured: started {} on 127.0.0.1:{}", executable.describe(), port);
	}

	/**
	 * Registered before any bean exists, so destroyed after all of them; not on
	 * {@link org.springframework.context.event.ContextClosedEvent}, which comes before
	 * the web server stops taking requests and drains the ones in flight.
	 */
	private synchronized void stopWhenDestroyed(ConfigurableApplicationContext context) {
		if (this.server != null && context.getBeanFactory() instanceof DefaultSingletonBeanRegistry registry) {
			registry.registerDisposableBean(DISPOSABLE_NAME, this::stop);
		}
	}

	private synchronized void stop() {
		if (this.server == null) {
			return;
		}
		try {
			this.server.stop();
			logger.info("Stopped the embedded Redis");
		}
		catch (IOException ex) {
			logger.warn("Could not stop the embedded Redis", ex);
		}
		finally {
			this.server = null;
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot find a free port on 127.0.0.1", ex);
		}
	}

}
