package io.lockstep.autoconfigure;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lock exception that reaches a Spring MVC or WebFlux controller is answered as RFC
 * 9457 problem details: 409 Conflict when the lock was not acquired in time, 503 Service
 * Unavailable when Redis does not answer, with the lock's name (never the key's value); a
 * {@code LockKeyException} is left to the application, the application's own handler
 * wins, and {@code lockstep.web.problem-details=false} turns it off. Over real HTTP on a
 * real port.
 */
@RedisTest
class WebProblemDetailsTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	@AfterEach
	void close() {
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void mvcAnswers409NamingTheLockButNotTheKey(RedisNode redis) throws Exception {
		ConfigurableApplicationContext context = start(MvcApplication.class, WebApplicationType.SERVLET, redis.port());
		try (LockHandle held = context.getBean(LockTemplate.class).acquire("orders:A-42")) {
			HttpResponse<String> response = get(context, "/named/A-42");
			System.out.printf("MVC, lock held elsewhere: %d %s%n%s%n", response.statusCode(),
					response.headers().firstValue("Content-Type").orElse(""), response.body());
			assertThat(response.statusCode()).isEqualTo(409);
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(response.body()).contains("\"status\":409")
				.contains("\"title\":\"Lock not acquired\"")
				.contains("\"lock\":\"orders\"")
				.doesNotContain("lockstep:")
				.doesNotContain("orders:A-42");
		}
		try (LockHandle held = context.getBean(LockTemplate.class).acquire("B-7")) {
			assertThat(get(context, "/unnamed/B-7").body()).contains("\"lock\":\"Stock.reserve\"");
		}
		assertThat(get(context, "/named/A-42").statusCode()).isEqualTo(200);
	}

	@Test
	void mvcAnswers503WhenRedisDoesNotAnswer() throws Exception {
		ConfigurableApplicationContext context = start(MvcApplication.class, WebApplicationType.SERVLET, closedPort());
		HttpResponse<String> response = get(context, "/named/A-42");
		System.out.printf("MVC, Redis down: %d%n%s%n", response.statusCode(), response.body());
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"title\":\"Lock unavailable\"")
			.contains("\"lock\":\"orders\"")
			.doesNotContain("lockstep:")
			.doesNotContain("127.0.0.1");
	}

	@Test
	void mvcLeavesABadKeyToTheApplication(RedisNode redis) throws Exception {
		ConfigurableApplicationContext context = start(MvcApplication.class, WebApplicationType.SERVLET, redis.port());
		HttpResponse<String> response = get(context, "/blank");
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(response.body()).doesNotContain("problem").doesNotContain("\"lock\"");
	}

	@Test
	void theApplicationsOwnHandlerWins(RedisNode redis) throws Exception {
		ConfigurableApplicationContext context = start(OwnHandlerApplication.class, WebApplicationType.SERVLET,
				redis.port());
		try (LockHandle held = context.getBean(LockTemplate.class).acquire("orders:A-42")) {
			HttpResponse<String> response = get(context, "/named/A-42");
			assertThat(response.statusCode()).isEqualTo(429);
			assertThat(response.body()).isEqualTo("busy, own handler");
		}
	}

	@Test
	void thePropertyTurnsItOff(RedisNode redis) throws Exception {
		ConfigurableApplicationContext context = start(MvcApplication.class, WebApplicationType.SERVLET, redis.port(),
				"lockstep.web.problem-details=false");
		try (LockHandle held = context.getBean(LockTemplate.class).acquire("orders:A-42")) {
			assertThat(get(context, "/named/A-42").statusCode()).isEqualTo(500);
		}
	}

	@Test
	void webFluxAnswers409And503NamingTheLock(RedisNode redis) throws Exception {
		ConfigurableApplicationContext context = start(FluxApplication.class, WebApplicationType.REACTIVE,
				redis.port());
		try (LockHandle held = context.getBean(LockTemplate.class).acquire("orders:A-42")) {
			HttpResponse<String> response = get(context, "/mono/A-42");
			System.out.printf("WebFlux, lock held elsewhere: %d %s%n%s%n", response.statusCode(),
					response.headers().firstValue("Content-Type").orElse(""), response.body());
			assertThat(response.statusCode()).isEqualTo(409);
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(response.body()).contains("\"lock\":\"orders\"").doesNotContain("orders:A-42");
		}
		assertThat(get(context, "/mono/A-42").statusCode()).isEqualTo(200);
		assertThat(get(context, "/mono-blank").statusCode()).isEqualTo(500);
		ConfigurableApplicationContext down = start(FluxApplication.class, WebApplicationType.REACTIVE, closedPort());
		HttpResponse<String> response = get(down, "/mono/A-42");
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.body()).contains("\"lock\":\"orders\"");
	}

	private ConfigurableApplicationContext start(Class<?> application, WebApplicationType type, int redisPort,
			String... properties) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(application).web(type)
			.properties("spring.main.banner-mode=off", "server.port=0", "spring.data.redis.port=" + redisPort,
					"spring.data.redis.connect-timeout=500ms", "lockstep.command-timeout=500ms")
			.properties(properties)
			.run();
		this.contexts.add(context);
		return context;
	}

	private HttpResponse<String> get(ConfigurableApplicationContext context, String path) throws Exception {
		String port = context.getEnvironment().getProperty("local.server.port");
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(20))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static int closedPort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ MvcEndpoints.class, Stock.class })
	static class MvcApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ MvcEndpoints.class, Stock.class, OwnHandler.class })
	static class OwnHandlerApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ FluxEndpoints.class, Stock.class })
	static class FluxApplication {

	}

	public static class Stock {

		@DistributedLock(key = "#sku", name = "orders", waitTime = "100ms")
		public String take(String sku) {
			return "taken " + sku;
		}

		@DistributedLock(key = "#sku", waitTime = "100ms")
		public String reserve(String sku) {
			return "reserved " + sku;
		}

		@DistributedLock(key = "#sku")
		public String blank(String sku) {
			return "never";
		}

		@DistributedLock(key = "#sku", name = "orders", waitTime = "100ms")
		public Mono<String> takeLater(String sku) {
			return Mono.just("taken " + sku);
		}

		@DistributedLock(key = "#sku")
		public Mono<String> blankLater(String sku) {
			return Mono.just("never");
		}

	}

	@RestController
	static class MvcEndpoints {

		private final Stock stock;

		MvcEndpoints(Stock stock) {
			this.stock = stock;
		}

		@GetMapping("/named/{sku}")
		String named(@PathVariable String sku) {
			return this.stock.take(sku);
		}

		@GetMapping("/unnamed/{sku}")
		String unnamed(@PathVariable String sku) {
			return this.stock.reserve(sku);
		}

		@GetMapping("/blank")
		String blank() {
			return this.stock.blank(" ");
		}

	}

	@RestController
	static class FluxEndpoints {

		private final Stock stock;

		FluxEndpoints(Stock stock) {
			this.stock = stock;
		}

		@GetMapping("/mono/{sku}")
		Mono<String> mono(@PathVariable String sku) {
			return this.stock.takeLater(sku);
		}

		@GetMapping("/mono-blank")
		Mono<String> blank() {
			return this.stock.blankLater(" ");
		}

	}

	@RestControllerAdvice
	static class OwnHandler {

		@ExceptionHandler
		ResponseEntity<String> busy(LockAcquisitionException ex) {
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("busy, own handler");
		}

	}

}
