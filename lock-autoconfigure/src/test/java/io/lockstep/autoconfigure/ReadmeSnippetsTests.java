package io.lockstep.autoconfigure;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import io.lockstep.DistributedLock;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The code of the README's quick start, compiled and run: an annotated service, the
 * {@code application.yml} ({@code src/test/resources/readme/application.yml}) and
 * {@link LockTemplate} usage. Keep the README in step with this class.
 */
@RedisTest
class ReadmeSnippetsTests {

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withInitializer((context) -> context.getEnvironment().getPropertySources().addLast(readmeYaml()))
		.withUserConfiguration(JdbcConfiguration.class, OrderService.class, Payments.class);

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
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
		// when another instance holds one of them (lockstep.locks.stock.wait-time: 0s).
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
			return new DriverManagerDataSource("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa", "");
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

}
