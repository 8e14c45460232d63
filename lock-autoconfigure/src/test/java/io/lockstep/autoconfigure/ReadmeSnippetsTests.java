package io.lockstep.autoconfigure;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.lockstep.DistributedLock;
import io.lockstep.DistributedLocks;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.ReactiveLockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The code of the README's 30-second example and of the docs pages, compiled and run: an
 * annotated service, the {@code application.yml}
 * ({@code src/test/resources/readme/application.yml}), {@link LockTemplate} usage, a
 * fenced write, a scheduled job and reactive methods; every Java block of the README and
 * of {@code docs/} that shows a whole class is also compiled from the page itself. Keep
 * the pages in step with this class.
 */
@RedisTest
class ReadmeSnippetsTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withInitializer((context) -> context.getEnvironment().getPropertySources().addLast(readmeYaml()))
		.withUserConfiguration(JdbcConfiguration.class, OrderService.class, Payments.class, StockLevels.class);

	private ApplicationContextRunner scheduledRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withUserConfiguration(SchedulingConfiguration.class, StockReport.class);

	private ApplicationContextRunner reactiveRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class,
				LockstepReactiveAutoConfiguration.class))
		.withUserConfiguration(ReactiveOrders.class);

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
		this.reactiveRunner = this.reactiveRunner.withPropertyValues("spring.data.redis.port=" + redis.port(),
				"lockstep.key-prefix=readme-reactive:");
		this.scheduledRunner = this.scheduledRunner.withPropertyValues("spring.data.redis.port=" + redis.port(),
				"lockstep.key-prefix=readme-scheduled-" + UUID.randomUUID() + ":");
	}

	@Test
	void applicationYamlConfiguresLockstep() {
		this.contextRunner.run((context) -> {
			LockstepProperties properties = context.getBean(LockstepProperties.class);
			assertThat(properties.getKeyPrefix()).isEqualTo("shop:");
			assertThat(properties.getWaitTime()).isEqualTo(Duration.ofSeconds(2));
			assertThat(properties.getLocks().get("stock").getWaitTime()).isZero();
		});
	}

	@Test
	void annotatedServiceRunsUnderItsLock() {
		this.contextRunner.run((context) -> {
			OrderService orders = context.getBean(OrderService.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			orders.place(new Order("order-1", "sku-7", 2));
			assertThat(context.getBean(RecordingStock.class).deducted).containsExactly("sku-7 x2 locked=true");
			assertThat(locks.isLocked("sku-7")).isFalse();
			assertThat(orders.recount(List.of("sku-7", "sku-8"))).contains(new Report(2));
			try (OtherThread other = new OtherThread();
					LockHandle held = other.call(() -> locks.named("stock").acquire("sku-8"))) {
				assertThat(orders.recount(List.of("sku-7", "sku-8"))).isEmpty();
			}
		});
	}

	@Test
	void lockTemplateSnippetsRun() {
		this.contextRunner.run((context) -> {
			Payments payments = context.getBean(Payments.class);
			assertThat(payments.pay("order-1")).startsWith("paid order-1 with fencing token ");
			assertThat(payments.payIfFree("order-1"))
				.hasValueSatisfying((receipt) -> assertThat(receipt).startsWith("paid"));
			assertThat(payments.refund("order-1")).isEqualTo("refunded shop:payment:order-1");
		});
	}

	@Test
	void aFencedWriteRefusesTheTokenOfAHolderWhoseLeaseEnded() {
		this.contextRunner.run((context) -> {
			StockLevels levels = context.getBean(StockLevels.class);
			JdbcClient jdbc = context.getBean(JdbcClient.class);
			jdbc.sql("INSERT INTO stock_level (sku, quantity, fence) VALUES ('sku-1', 0, 0)").update();
			assertThat(levels.set("sku-1", 5)).isTrue();
			long first = fence(jdbc);
			// a holder whose fixed lease ends before it writes (a long GC pause, say) ...
			LockTemplate stockLocks = context.getBean(LockTemplate.class).named("stock");
			LockHandle late = stockLocks.withLeaseTime(Duration.ofMillis(300)).acquire("sku-1");
			long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
			while ((late.isHeld() || stockLocks.isLocked("sku-1")) && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			// ... while the next holder writes through the annotated method
			assertThat(levels.set("sku-1", 7)).isTrue();
			long next = fence(jdbc);
			// the late holder's write, the page's statement with its own token, changes
			// nothing
			int lateWrite = jdbc.sql("UPDATE stock_level SET quantity = ?, fence = ? WHERE sku = ? AND fence < ?")
				.params(3, late.fencingToken(), "sku-1", late.fencingToken())
				.update();
			System.out.printf("fenced writes: token %d wrote, %d wrote, late holder's %d refused (%d rows)%n", first,
					next, late.fencingToken(), lateWrite);
			assertThat(first).isLessThan(late.fencingToken());
			assertThat(late.fencingToken()).isLessThan(next);
			assertThat(lateWrite).isZero();
			assertThat(jdbc.sql("SELECT quantity FROM stock_level WHERE sku = 'sku-1'").query(Integer.class).single())
				.isEqualTo(7);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(late::close);
		});
	}

	private static long fence(JdbcClient jdbc) {
		return jdbc.sql("SELECT fence FROM stock_level WHERE sku = 'sku-1'").query(Long.class).single();
	}

	/**
	 * Every Java block of the README's 30-second example and the fenced write of
	 * {@code docs/annotation-and-template.md}, compiled as printed (with the
	 * application's own types {@code Order}, {@code Report} and {@code Stock} beside
	 * them): each is complete, imports included.
	 */
	@Test
	void everyJavaBlockOfTheQuickStartCompilesAsPrinted(@TempDir Path dir) throws IOException {
		List<String> readme = javaBlocks(page("README.md"), "## A 30-second example");
		List<String> fencing = javaBlocks(page("docs/annotation-and-template.md"), "## Fencing tokens");
		assertThat(readme).hasSize(2);
		assertThat(fencing).hasSize(1);
		List<String> blocks = new ArrayList<>(readme);
		blocks.addAll(fencing);
		List<Path> sources = new ArrayList<>();
		for (int i = 0; i < blocks.size(); i++) {
			sources.add(Files.writeString(dir.resolve("Snippet" + i + ".java"), blocks.get(i)));
		}
		sources.add(Files.writeString(dir.resolve("ApplicationTypes.java"), """
				record Order(String id, String sku, int quantity) {
				}

				record Report(int items) {
				}

				interface Stock {

					void deduct(String sku, int quantity);

				}
				"""));
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, null)) {
			boolean compiled = compiler
				.getTask(null, files, diagnostics,
						List.of("-proc:none", "-d", Files.createDirectories(dir.resolve("classes")).toString(),
								"-classpath", System.getProperty("java.class.path")),
						null, files.getJavaFileObjectsFromPaths(sources))
				.call();
			System.out.printf("README's 30-second example and the fenced write: %d Java blocks compiled: %s%n",
					blocks.size(), compiled);
			assertThat(diagnostics.getDiagnostics())
				.filteredOn((diagnostic) -> diagnostic.getKind() == Diagnostic.Kind.ERROR)
				.isEmpty();
			assertThat(compiled).isTrue();
		}
	}

	/** The {@code java} code blocks of one section ({@code ## } heading to the next). */
	private static List<String> javaBlocks(String readme, String heading) {
		int start = readme.indexOf(heading + "\n");
		assertThat(start).as("section %s", heading).isNotNegative();
		int end = readme.indexOf("\n## ", start + heading.length());
		String section = readme.substring(start, (end >= 0) ? end : readme.length());
		List<String> blocks = new ArrayList<>();
		int from = 0;
		while ((from = section.indexOf("```java\n", from)) >= 0) {
			int close = section.indexOf("\n```", from);
			blocks.add(section.substring(from + "```java\n".length(), close + 1));
			from = close + 4;
		}
		return blocks;
	}

	@Test
	void scheduledJobRunsOncePerMinimumHoldAcrossTwoInstances() {
		try (Recorded reports = Recorded.of(StockReport.class)) {
			ApplicationContextRunner instance = this.scheduledRunner.withPropertyValues("reports.stock.rate=500ms",
					"reports.stock.min-hold=2s");
			long start = System.nanoTime();
			instance.run((first) -> {
				assertThat(first).hasNotFailed();
				LockMonitor locks = first.getBean(LockMonitor.class);
				await("after the first run the key is kept for the rest of the 2s").atMost(Duration.ofSeconds(10))
					.until(() -> locks.leaseRemaining("stock-report")
						.filter((left) -> left.compareTo(Duration.ofSeconds(2)) <= 0)
						.isPresent());
				instance.run((second) -> {
					assertThat(second).hasNotFailed();
					// both instances run side by side until the job has run three times
					// (at least 4 s with runs 2 s apart)
					await("three reports").atMost(Duration.ofSeconds(15)).until(() -> reports.count() >= 3);
				});
			});
			long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			System.out.printf(
					"Scheduled job of docs/scheduled-jobs.md, rate 500ms, min-hold 2s, 2 instances: %d reports in %d ms%n",
					reports.count(), millis);
			// runs start at least 2s apart (less a millisecond of rounding)
			assertThat(reports.count()).isBetween(2, (int) (millis / 1990) + 1);
		}
	}

	@Test
	void scheduledJobKeepsTheLockFor55sByDefault() {
		try (Recorded reports = Recorded.of(StockReport.class)) {
			this.scheduledRunner.run((context) -> {
				LockMonitor locks = context.getBean(LockMonitor.class);
				// the job logs before it returns: until its release keeps the key, the
				// key
				// has the 30s lease
				await().atMost(Duration.ofSeconds(10))
					.until(() -> reports.count() == 1 && locks.leaseRemaining("stock-report")
						.filter((left) -> left.compareTo(Duration.ofSeconds(55)) <= 0
								&& left.compareTo(Duration.ofSeconds(31)) > 0)
						.isPresent());
				Duration left = locks.leaseRemaining("stock-report").orElseThrow();
				System.out.printf(
						"Scheduled job of docs/scheduled-jobs.md with its defaults: sent once, lock kept %s more%n",
						left);
				assertThat(left).isBetween(Duration.ofSeconds(45), Duration.ofSeconds(55));
			});
		}
	}

	@Test
	void reactiveMethodsRunUnderTheirLockForTheSubscription() {
		this.reactiveRunner.run((context) -> {
			ReactiveOrders orders = context.getBean(ReactiveOrders.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			assertThat(orders.confirm("order-1").block(Duration.ofSeconds(5)))
				.matches("confirmed order-1 with fencing token \\d+");
			assertThat(orders.export().collectList().block(Duration.ofSeconds(5))).containsExactly("order-1",
					"order-2");
			assertThat(orders.refundIfFree("order-1").block(Duration.ofSeconds(5)))
				.isEqualTo("refunded readme-reactive:orders:order-1");
			try (OtherThread other = new OtherThread();
					LockHandle export = other.call(() -> locks.acquire("export"));
					LockHandle order = other.call(() -> locks.named("orders").acquire("order-1"))) {
				assertThat(orders.export().collectList().block(Duration.ofSeconds(5))).isEmpty();
				assertThat(orders.refundIfFree("order-1").blockOptional(Duration.ofSeconds(5))).isEmpty();
			}
			assertThat(locks.isLocked("export")).isFalse();
		});
	}

	/**
	 * The whole classes the docs show, each the first Java block of its section, compiled
	 * as printed.
	 */
	@ParameterizedTest(name = "{0}: {1}")
	@CsvSource(delimiter = '|',
			textBlock = """
					docs/reactive-and-kotlin.md                | ## Reactive methods                       | com.example.orders.ReactiveOrders
					docs/read-write-locks-and-semaphores.md    | # Read/write locks and semaphores          | com.example.documents.Documents
					docs/scheduled-jobs.md                     | # Scheduled jobs: one instance per period  | com.example.reports.StockReport
					docs/annotation-and-template.md            | ## Without the starter                    | com.example.inventory.Inventory
					docs/redlock.md                            | # Redlock                                  | com.example.redlock.RedlockTemplates
					""")
	void everyWholeClassOfTheDocsCompilesAsItStands(String file, String heading, String type, @TempDir Path classes)
			throws IOException {
		String simpleName = type.substring(type.lastIndexOf('.') + 1);
		compileAsItStands(file, heading, "class " + simpleName, classes);
		assertThat(classes.resolve(type.replace('.', '/') + ".class")).exists();
	}

	/**
	 * Compiles the first Java block of a section of a page (README.md or docs/...) as
	 * printed.
	 */
	private static void compileAsItStands(String file, String heading, String expected, Path classes)
			throws IOException {
		String text = "\n" + page(file);
		int section = text.indexOf("\n" + heading + "\n");
		assertThat(section).as("%s: section '%s'", file, heading).isNotNegative();
		int from = text.indexOf("```java\n", section) + "```java\n".length();
		String code = text.substring(from, text.indexOf("```", from));
		assertThat(code).contains(expected).contains("import io.lockstep.");
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		StringWriter output = new StringWriter();
		String className = expected.substring("class ".length());
		JavaFileObject source = new SimpleJavaFileObject(URI.create("string:///" + className + ".java"),
				JavaFileObject.Kind.SOURCE) {

			@Override
			public CharSequence getCharContent(boolean ignoreEncodingErrors) {
				return code;
			}

		};
		boolean compiled = compiler
			.getTask(output, null, null,
					List.of("-proc:none", "-classpath", System.getProperty("java.class.path"), "-d",
							classes.toString()),
					null, List.of(source))
			.call();
		assertThat(compiled).as("javac on %s, %s: %s", file, heading, output).isTrue();
	}

	/** A page of the project, by its path from the root (README.md, docs/...). */
	private static String page(String file) throws IOException {
		return Files.readString(Path.of("..").resolve(file));
	}

	private static PropertySource<?> readmeYaml() {
		try {
			return new YamlPropertySourceLoader().load("readme", new ClassPathResource("readme/application.yml"))
				.get(0);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	// --- README: the annotated service ---

	record Order(String id, String sku, int quantity) {
	}

	record Report(int items) {
	}

	interface Stock {

		void deduct(String sku, int quantity);

	}

	@Service
	static class OrderService {

		private final Stock stock;

		OrderService(Stock stock) {
			this.stock = stock;
		}

		// One caller per SKU at a time, across all instances; the lock is taken before
		// the transaction begins and released after it commits.
		@DistributedLock(key = "#order.sku")
		@Transactional
		public void place(Order order) {
			this.stock.deduct(order.sku(), order.quantity());
		}

		// Locks every SKU of the list, all or nothing; returns Optional.empty() at once
		// when another instance holds one of them (SKIP does not wait without a wait
		// time).
		@DistributedLock(key = "#skus", name = "stock", onLocked = OnLocked.SKIP)
		public Optional<Report> recount(List<String> skus) {
			return Optional.of(new Report(skus.size()));
		}

	}

	// --- README: LockTemplate where an annotation does not fit ---

	@Service
	static class Payments {

		private final LockTemplate locks;

		Payments(LockTemplate locks) {
			this.locks = locks;
		}

		String pay(String orderId) {
			// waits up to lockstep.wait-time, else LockAcquisitionException
			return this.locks.execute("payment:" + orderId, (lock) -> charge(orderId, lock.fencingToken()));
		}

		Optional<String> payIfFree(String orderId) {
			// no wait: empty when another instance holds the lock
			return this.locks.tryExecute("payment:" + orderId, (lock) -> charge(orderId, lock.fencingToken()));
		}

		String refund(String orderId) {
			try (LockHandle lock = this.locks.withWaitTime(Duration.ofSeconds(10)).acquire("payment:" + orderId)) {
				return "refunded " + lock.key();
			}
		}

		private String charge(String orderId, long fencingToken) {
			return "paid " + orderId + " with fencing token " + fencingToken;
		}

	}

	// --- docs/annotation-and-template.md: a fenced write ---

	@Service
	static class StockLevels {

		private final JdbcClient jdbc;

		StockLevels(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		// false when a later holder of the lock wrote the row first: this call's lease
		// had ended
		@DistributedLock(key = "#sku", name = "stock")
		@Transactional
		public boolean set(String sku, int quantity) {
			long token = DistributedLocks.currentFencingToken().orElseThrow();
			return this.jdbc.sql("UPDATE stock_level SET quantity = ?, fence = ? WHERE sku = ? AND fence < ?")
				.params(quantity, token, sku, token)
				.update() == 1;
		}

	}

	// --- docs/reactive-and-kotlin.md: Reactive methods ---

	@Service
	static class ReactiveOrders {

		private final ReactiveLockTemplate locks;

		ReactiveOrders(ReactiveLockTemplate locks) {
			this.locks = locks;
		}

		// Acquired on subscribe, released when the Mono completes, fails or is cancelled.
		// Inside, the fencing token comes from the Reactor Context.
		@DistributedLock(key = "#orderId", name = "orders")
		public Mono<String> confirm(String orderId) {
			return ReactiveLockTemplate.currentFencingToken()
				.map((token) -> "confirmed " + orderId + " with fencing token " + token);
		}

		// A Flux holds the lock until it completes; SKIP gives an empty Flux at once when
		// another instance holds the lock.
		@DistributedLock(key = "'export'", onLocked = OnLocked.SKIP)
		public Flux<String> export() {
			return Flux.just("order-1", "order-2");
		}

		// The programmatic form: the work gets the LockHandle; empty when held elsewhere.
		Mono<String> refundIfFree(String orderId) {
			return this.locks.named("orders").tryExecute(orderId, (lock) -> Mono.just("refunded " + lock.key()));
		}

	}

	// --- docs/scheduled-jobs.md ---

	@Configuration(proxyBeanMethods = false)
	@EnableScheduling
	static class SchedulingConfiguration {

	}

	@Component
	static class StockReport {

		private static final Logger logger = LoggerFactory.getLogger(StockReport.class);

		// Every instance ticks once a minute. The first to take the lock sends the
		// report; the lock
		// stays taken for 55s from then, even if sending takes 2s, so the others skip
		// this minute.
		@Scheduled(fixedRateString = "${reports.stock.rate:1m}")
		@DistributedLock(key = "'stock-report'", minHoldTime = "${reports.stock.min-hold:55s}",
				onLocked = OnLocked.SKIP)
		public void send() {
			logger.info("Sending the stock report");
		}

	}

	/** Counts what a class logs, e.g. the reports sent by every instance of this JVM. */
	static final class Recorded implements AutoCloseable {

		private final ch.qos.logback.classic.Logger logger;

		private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

		private Recorded(Class<?> type) {
			this.logger = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(type);
			this.appender.start();
			this.logger.addAppender(this.appender);
		}

		static Recorded of(Class<?> type) {
			return new Recorded(type);
		}

		int count() {
			return this.appender.list.size();
		}

		@Override
		public void close() {
			this.logger.detachAppender(this.appender);
		}

	}

	static class RecordingStock implements Stock {

		final List<String> deducted = new java.util.concurrent.CopyOnWriteArrayList<>();

		private final LockTemplate locks;

		RecordingStock(LockTemplate locks) {
			this.locks = locks;
		}

		@Override
		public void deduct(String sku, int quantity) {
			this.deducted.add(sku + " x" + quantity + " locked=" + this.locks.isLocked(sku));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class JdbcConfiguration {

		@Bean
		RecordingStock stock(LockTemplate locks) {
			return new RecordingStock(locks);
		}

		@Bean
		DataSource dataSource() {
			DataSource dataSource = new DriverManagerDataSource(
					"jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
			JdbcClient.create(dataSource)
				.sql("CREATE TABLE stock_level (sku VARCHAR(64) PRIMARY KEY, quantity INT, fence BIGINT)")
				.update();
			return dataSource;
		}

		@Bean
		JdbcClient jdbcClient(DataSource dataSource) {
			return JdbcClient.create(dataSource);
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

}
