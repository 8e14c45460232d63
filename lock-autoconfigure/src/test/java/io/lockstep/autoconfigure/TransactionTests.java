package io.lockstep.autoconfigure;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import io.lockstep.DistributedLock;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.LockLostException;
import io.lockstep.LockTemplate;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DistributedLock} with {@code @Transactional} JDBC work on H2 and a real Redis:
 * the seed scenario (no overselling), the advice order, locks taken inside a running
 * transaction, and the check before commit.
 */
@RedisTest
class TransactionTests {

	private static final int STOCK = 100;

	private static final int THREADS = 8;

	private static final int ORDERS_PER_THREAD = 40;

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class))
		.withPropertyValues("lockstep.key-prefix=tx:", "lockstep.wait-time=60s");

	private static final Class<?>[] METERS = { ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
			CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
			LockstepObservationAutoConfiguration.class };

	private RedisNode redis;

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redis = redis;
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port(),
				"test.database=" + UUID.randomUUID());
	}

	@Test
	void lockAroundTheTransactionNeverOversells() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				assertThat(placeConcurrently(shop, "seed")).isEqualTo(STOCK);
				assertThat(shop.orders("seed")).isEqualTo(STOCK);
				assertThat(shop.stock("seed")).isZero();
			});
	}

	@Test
	void lockInsideTheTransactionIsHeldUntilCommitAndNeverOversells() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, LocksInsideTransactions.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				assertThat(placeConcurrently(shop, "inside")).isEqualTo(STOCK);
				assertThat(shop.orders("inside")).isEqualTo(STOCK);
				assertThat(shop.stock("inside")).isZero();
			});
	}

	@Test
	void lockReleasedBeforeCommitOversells() {
		// The control that proves the scenario can fail: the lock is inside the
		// transaction and Lockstep cannot see that transaction (no synchronization), so
		// the lock is released before the commit and the next buyer reads stale stock.
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, LocksInsideTransactions.class)
			.withPropertyValues("test.synchronization=never")
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				placeConcurrently(shop, "control");
				assertThat(shop.orders("control")).isGreaterThan(STOCK);
			});
	}

	@Test
	void lockIsTakenBeforeTheTransactionBeginsByDefault() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> assertThat(lockedWhenTransactionBegan(context)).isTrue());
	}

	@Test
	void aspectOrderPropertyDecidesWhetherTheLockWrapsTheTransaction() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, LocksInsideTransactions.class)
			.run((context) -> assertThat(lockedWhenTransactionBegan(context)).isFalse());
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, LocksInsideTransactions.class)
			.withPropertyValues("lockstep.aspect-order=-1")
			.run((context) -> assertThat(lockedWhenTransactionBegan(context)).isTrue());
	}

	@Test
	void lockTakenInsideARunningTransactionIsHeldUntilAfterCommit() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				LockTemplate locks = context.getBean(LockTemplate.class);
				List<Boolean> lockedAfterCall = new ArrayList<>();
				transactions(context).executeWithoutResult((status) -> {
					assertThat(shop.order("outer")).isTrue();
					lockedAfterCall.add(locks.isLocked("outer"));
				});
				assertThat(lockedAfterCall).containsExactly(true);
				assertThat(locks.isLocked("outer")).isFalse();
				assertThat(shop.orders("outer")).isOne();
			});
	}

	@Test
	void lockLostInsideARunningTransactionRollsItBack() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				assertThatExceptionOfType(LockLostException.class)
					.isThrownBy(() -> transactions(context).executeWithoutResult((status) -> {
						shop.order("guarded");
						assertThat(this.redis.call("DEL", "tx:guarded")).isEqualTo(1L);
					}))
					.withMessageContaining("tx:guarded");
				assertThat(shop.orders("guarded")).isZero();
				assertThat(shop.stock("guarded")).isEqualTo(STOCK);
			});
	}

	@Test
	void lockLostWhileTheAnnotatedTransactionRunsRollsItBack() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				shop.afterDeduction(() -> assertThat(this.redis.call("DEL", "tx:method")).isEqualTo(1L));
				assertThatExceptionOfType(LockLostException.class).isThrownBy(() -> shop.order("method"))
					.withMessageContaining("tx:method");
				assertThat(shop.orders("method")).isZero();
				assertThat(shop.stock("method")).isEqualTo(STOCK);
			});
	}

	@Test
	void aTemplateLockTakenInsideATransactionIsHeldUntilAfterCommit() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				LockTemplate locks = context.getBean(LockTemplate.class);
				List<Boolean> lockedAfterCallback = new ArrayList<>();
				transactions(context).executeWithoutResult((status) -> {
					assertThat(locks.execute("template", LockHandle::fencingToken)).isPositive();
					lockedAfterCallback.add(locks.isLocked("template"));
				});
				assertThat(lockedAfterCallback).containsExactly(true);
				assertThat(locks.isLocked("template")).isFalse();
				// outside a transaction the callback's end releases it
				locks.execute("template", LockHandle::fencingToken);
				assertThat(locks.isLocked("template")).isFalse();
			});
	}

	@Test
	void aTemplateLockLostInsideATransactionRollsItBack() {
		this.contextRunner.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				LockTemplate locks = context.getBean(LockTemplate.class);
				assertThatExceptionOfType(LockLostException.class)
					.isThrownBy(() -> transactions(context).executeWithoutResult((status) -> {
						locks.execute("template-guard", (lock) -> shop.order("template"));
						assertThat(this.redis.call("DEL", "tx:template-guard")).isEqualTo(1L);
					}))
					.withMessageContaining("tx:template-guard");
				assertThat(shop.orders("template")).isZero();
				assertThat(shop.stock("template")).isEqualTo(STOCK);
			});
	}

	/**
	 * Redis stops answering just before the commit: the check cannot confirm the lock, so
	 * the transaction rolls back (the safety stays), with a message that says so and its
	 * cause, counted by lock name.
	 */
	@Test
	void aLockThatCannotBeConfirmedBeforeCommitRollsBackNamedAndCounted() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(METERS))
			.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.withPropertyValues("lockstep.lease-time=6s")
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				shop.afterDeduction(this.redis::pause);
				try {
					assertThatExceptionOfType(LockException.class).isThrownBy(() -> shop.order("unconfirmed"))
						.satisfies((ex) -> System.out.printf("Redis paused before commit: %s%n", ex.getMessage()))
						.isNotInstanceOf(LockLostException.class)
						.withMessageStartingWith("Could not confirm the lock before commit ('tx:unconfirmed')")
						.withMessageContaining("so the transaction rolls back")
						.withMessageContaining("Redis did not answer within 2s")
						.withCauseInstanceOf(LockException.class);
				}
				finally {
					this.redis.resume();
				}
				assertThat(shop.orders("unconfirmed")).isZero();
				assertThat(shop.stock("unconfirmed")).isEqualTo(STOCK);
				assertThat(precommitFailures(context, "Shop.order")).isEqualTo(1);
			});
	}

	@Test
	void aTemplateLockThatCannotBeConfirmedBeforeCommitRollsBackNamedAndCounted() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(METERS))
			.withUserConfiguration(ShopConfiguration.class, TransactionsInsideLocks.class)
			.withPropertyValues("lockstep.lease-time=6s")
			.run((context) -> {
				Shop shop = context.getBean(Shop.class);
				LockTemplate locks = context.getBean(LockTemplate.class);
				try {
					assertThatExceptionOfType(LockException.class)
						.isThrownBy(() -> transactions(context).executeWithoutResult((status) -> {
							locks.named("guard").execute("unconfirmed", (lock) -> shop.order("unconfirmed"));
							this.redis.pause();
						}))
						.isNotInstanceOf(LockLostException.class)
						.withMessageStartingWith("Could not confirm the lock before commit ('tx:guard:unconfirmed')");
				}
				finally {
					this.redis.resume();
				}
				assertThat(shop.orders("unconfirmed")).isZero();
				assertThat(precommitFailures(context, "guard")).isEqualTo(1);
				assertThat(precommitFailures(context, "Shop.order")).isZero();
			});
	}

	private static double precommitFailures(AssertableApplicationContext context, String lockName) {
		Counter counter = context.getBean(MeterRegistry.class)
			.find("lockstep.precommit.failed")
			.tag("lock", lockName)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static TransactionTemplate transactions(AssertableApplicationContext context) {
		return new TransactionTemplate(context.getBean(DataSourceTransactionManager.class));
	}

	private static boolean lockedWhenTransactionBegan(AssertableApplicationContext context) {
		String sku = "order";
		LockTemplate locks = context.getBean(LockTemplate.class);
		AtomicBoolean locked = new AtomicBoolean();
		context.getBean(DataSourceTransactionManager.class).addListener(new TransactionExecutionListener() {

			@Override
			public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
				locked.set(locks.isLocked(sku));
			}

		});
		assertThat(context.getBean(Shop.class).order(sku)).isTrue();
		return locked.get();
	}

	/** 8 threads × 40 orders for 100 items, all starting together. */
	private static int placeConcurrently(Shop shop, String sku) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			CyclicBarrier start = new CyclicBarrier(THREADS);
			List<Future<Integer>> placed = new ArrayList<>();
			for (int i = 0; i < THREADS; i++) {
				placed.add(executor.submit(() -> {
					start.await(10, TimeUnit.SECONDS);
					int count = 0;
					for (int order = 0; order < ORDERS_PER_THREAD; order++) {
						if (shop.order(sku)) {
							count++;
						}
					}
					return count;
				}));
			}
			int total = 0;
			for (Future<Integer> result : placed) {
				total += result.get(120, TimeUnit.SECONDS);
			}
			return total;
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class TransactionsInsideLocks {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement(order = 0)
	static class LocksInsideTransactions {

	}

	@Configuration(proxyBeanMethods = false)
	static class ShopConfiguration {

		@Bean
		DataSource dataSource(@Value("${test.database}") String database) {
			DriverManagerDataSource h2 = new DriverManagerDataSource(
					"jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=60000", "sa", "");
			DataSource dataSource = new SlowCommitDataSource(h2);
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute(
					"create table if not exists stock (sku varchar(64) primary key, stock int not null check (stock >= 0))");
			jdbc.execute(
					"create table if not exists orders (id bigint auto_increment primary key, sku varchar(64) not null)");
			for (String sku : List.of("seed", "inside", "control", "order", "outer", "guarded", "method", "template",
					"unconfirmed")) {
				jdbc.update("merge into stock (sku, stock) key (sku) values (?, ?)", sku, STOCK);
			}
			return dataSource;
		}

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource,
				@Value("${test.synchronization:always}") String synchronization) {
			DataSourceTransactionManager manager = new DataSourceTransactionManager(dataSource);
			if (synchronization.equals("never")) {
				manager.setTransactionSynchronization(AbstractPlatformTransactionManager.SYNCHRONIZATION_NEVER);
			}
			return manager;
		}

		@Bean
		Shop shop(DataSource dataSource) {
			return new Shop(new JdbcTemplate(dataSource));
		}

	}

	/**
	 * Commits take a couple of milliseconds, as with a database over the network: the
	 * window in which a lock released before the commit lets a reader see stale stock.
	 */
	static class SlowCommitDataSource extends DelegatingDataSource {

		SlowCommitDataSource(DataSource target) {
			super(target);
		}

		@Override
		public Connection getConnection() throws SQLException {
			Connection connection = super.getConnection();
			return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
					(proxy, method, args) -> {
						if (method.getName().equals("commit")) {
							// models a commit's round trip of 2 ms
							Thread.sleep(2);
						}
						try {
							return method.invoke(connection, args);
						}
						catch (java.lang.reflect.InvocationTargetException ex) {
							throw ex.getTargetException();
						}
					});
		}

	}

	static class Shop {

		private final JdbcTemplate jdbc;

		private volatile Runnable afterDeduction = () -> {
		};

		Shop(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		void afterDeduction(Runnable hook) {
			this.afterDeduction = hook;
		}

		/**
		 * Read-then-write deduction: loses updates unless callers are serialized until
		 * commit.
		 */
		@DistributedLock(key = "#sku")
		@Transactional(isolation = Isolation.READ_COMMITTED)
		public boolean order(String sku) {
			int stock = this.jdbc.queryForObject("select stock from stock where sku = ?", Integer.class, sku);
			if (stock <= 0) {
				return false;
			}
			this.jdbc.update("insert into orders (sku) values (?)", sku);
			this.jdbc.update("update stock set stock = ? where sku = ?", stock - 1, sku);
			this.afterDeduction.run();
			return true;
		}

		public int orders(String sku) {
			return this.jdbc.queryForObject("select count(*) from orders where sku = ?", Integer.class, sku);
		}

		public int stock(String sku) {
			return this.jdbc.queryForObject("select stock from stock where sku = ?", Integer.class, sku);
		}

	}

}
