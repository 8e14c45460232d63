package io.lockstep.sample;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.ProtocolHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Lets the last responses of a graceful shutdown reach their clients. Spring Boot's
 * graceful shutdown waits until no request is inside a servlet, and then stops Tomcat,
 * which closes every connection at once. A response is completed only after its servlet
 * returns (Spring MVC does not flush the body itself), so a request that finished just
 * before that check could lose its response: the client saw the connection close with no
 * reply. This runs between the two steps and waits, at most {@link #TIMEOUT}, until
 * Tomcat has closed the connections of its paused connector: it closes each one once its
 * response is out. Tomcat does not close idle keep-alive connections when it pauses, so
 * one of those holds the stop for the whole timeout. With {@code server.shutdown:
 * immediate} nothing is paused, and this does not wait.
 */
@Component
class ResponsesDrain implements TomcatConnectorCustomizer, SmartLifecycle {

	/** The longest wait for the connections to close before the web server stops. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(ResponsesDrain.class);

	/** The connectors it customized: Spring Boot's main one. */
	private final List<Connector> connectors = new CopyOnWriteArrayList<>();

	private volatile boolean running;

	@Override
	public void customize(Connector connector) {
		this.connectors.add(connector);
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		long started = System.nanoTime();
		long left = TIMEOUT.toMillis();
		for (Connector connector : this.connectors) {
			ProtocolHandler handler = connector.getProtocolHandler();
			boolean paused = handler instanceof AbstractProtocol<?> protocol && protocol.isPaused();
			if (paused && left > 0 && !Thread.currentThread().isInterrupted()) {
				// ends early, with 0 left, if the thread is interrupted meanwhile
				left = handler.awaitConnectionsClose(left);
			}
		}
		if (left <= 0) {
			logger.info("Connections still open after waiting {} ms for them to close; stopping the web server",
					(System.nanoTime() - started) / 1_000_000);
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Not paused with the context (as Spring's test context cache does between test
	 * classes): the web server goes on serving then, and nothing is to be drained.
	 */
	@Override
	public boolean isPauseable() {
		return false;
	}

	/** After the graceful shutdown's phase, before the web server's. */
	@Override
	public int getPhase() {
		return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 512;
	}

}
