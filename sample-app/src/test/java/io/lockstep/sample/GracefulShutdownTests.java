package io.lockstep.sample;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockstep.test.Eventually;
import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.tomcat.TomcatContextCustomizer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Closing the sample while a demo request runs, as Ctrl+C does (Spring Boot's shutdown
 * hook closes the context): the web server lets the request finish with the embedded
 * Redis still up (graceful shutdown), its response reaches the client, and the embedded
 * Redis stops after that, with the application.
 * <p>
 * The response is written out only after the servlet has returned, and Spring Boot's
 * graceful shutdown ends as soon as no request is inside a servlet: on a loaded machine
 * the web server sometimes stopped in between, and the client saw the connection close
 * with no reply ({@code HTTP/1.1 header parser received no bytes}).
 * {@link SlowResponseEnd} widens that gap to {@link SlowResponseEnd#DELAY} on every run;
 * {@link ResponsesDrain} closes it.
 */
class GracefulShutdownTests {

	@Test
	void theEmbeddedRedisStopsAfterTheWebServerHasDrained() throws Exception {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class,
				SlowResponseEnd.class)
			.properties("server.port=0", "sample.report-interval=1h", "sample.processing-time=5ms",
					"lockstep.locks.stock.wait-time=2s")
			.run();
		int redisPort;
		CompletableFuture<HttpResponse<String>> demo;
		long closeMillis;
		try {
			redisPort = context.getEnvironment().getRequiredProperty("spring.data.redis.port", Integer.class);
			int httpPort = ((WebServerApplicationContext) context).getWebServer().getPort();
			InventoryRepository repository = context.getBean(InventoryRepository.class);
			demo = HttpClient.newHttpClient()
				.sendAsync(HttpRequest
					.newBuilder(URI.create("http://127.0.0.1:" + httpPort
							+ "/api/demo?sku=lamp&orders=200&stock=50&instances=4&locked=true"))
					.POST(HttpRequest.BodyPublishers.noBody())
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(awaitDemoUnderWay(repository, Duration.ofSeconds(20))).as("demo under way").isTrue();
		}
		finally {
			long closing = System.nanoTime();
			context.close();
			closeMillis = (System.nanoTime() - closing) / 1_000_000;
		}
		HttpResponse<String> response = demo.get(30, TimeUnit.SECONDS);
		boolean redisUp = awaitClosed(redisPort, Duration.ofSeconds(5));
		System.out.printf("closed during a demo: close() took %d ms; the demo answered %d %s; embedded Redis %s%n",
				closeMillis, response.statusCode(), excerpt(response.body()),
				redisUp ? "STILL RUNNING" : "stopped after");
		assertThat(response.statusCode()).as("the request in flight finished").isEqualTo(200);
		assertThat(response.body()).contains("\"accepted\":50").contains("\"oversold\":0");
		assertThat(redisUp).as("the embedded Redis stopped with the application").isFalse();
	}

	/**
	 * Holds the demo's response back for {@link #DELAY} after its servlet returned,
	 * before Tomcat writes it out.
	 */
	@Configuration(proxyBeanMethods = false)
	static class SlowResponseEnd {

		static final Duration DELAY = Duration.ofMillis(250);

		@Bean
		TomcatContextCustomizer slowResponseEnd() {
			return (context) -> context.getPipeline().addValve(new ValveBase() {
				@Override
				public void invoke(Request request, Response response) throws IOException, ServletException {
					getNext().invoke(request, response);
					if (request.getRequestURI().equals("/api/demo")) {
						try {
							Thread.sleep(DELAY.toMillis());
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					}
				}
			});
		}

	}

	/** Polls until some but not all of the demo's orders are in. */
	private static boolean awaitDemoUnderWay(InventoryRepository repository, Duration timeout) {
		return Eventually.holds(timeout, () -> {
			Map<String, Integer> counts = repository.orderCounts("lamp");
			int orders = counts.values().stream().mapToInt(Integer::intValue).sum();
			return orders > 0 && orders < 200;
		});
	}

	/** Whether Redis still accepts connections after the timeout. */
	private static boolean awaitClosed(int port, Duration timeout) {
		return !Eventually.holds(timeout, () -> {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
				return false;
			}
			catch (IOException ex) {
				return true;
			}
		});
	}

	private static String excerpt(String body) {
		return (body.length() > 120) ? body.substring(0, 120) + "…" : body;
	}

}
