package io.lockstep.sample;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.catalina.connector.Connector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Lets the last responses of a graceful shutdown reach their clients. Spring Boot's
 * graceful shutdown waits until no request is inside a servlet, and then stops Tomcat,
 * which closes every connection at once. A response is written out only after its servlet
 * returns (Spring MVC does not flush the body itself), so a request that finished just
 * before that check could lose its response: the client saw the connection close with no
 * reply. This runs between the two steps and waits, at most {@link #TIMEOUT}, until
 * Tomcat has closed the connections itself (after the graceful shutdown began, it answers
 * with {@code Connection: close} and closes each connection once its response is out).
 */
@Component
class ResponsesDrain implements TomcatConnectorCustomizer, SmartLifecycle {

	/** The longest wait for the connections to close before the web server stops. */
	static final Duration TIMEOUT = Duration.ofSeconds(1);

	private static final Logger logger = LoggerFactory.getLogger(ResponsesDrain.class);

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
		long left = TIMEOUT.toMillis();
		for (Connector connector : this.connectors) {
			left = connector.getProtocolHandler().awaitConnectionsClose(left);
		}
		if (left <= 0) {
			logger.info("Connections still open after waiting {} ms for them to close; stopping the web server",
					TIMEOUT.toMillis());
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/** After the graceful shutdown's phase, before the web server's. */
	@Override
	public int getPhase() {
		return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 512;
	}

}
