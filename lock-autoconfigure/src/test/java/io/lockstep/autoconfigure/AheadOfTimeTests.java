package io.lockstep.autoconfigure;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.lockstep.DistributedLock;
import io.lockstep.LockAcquisitionException;
import io.lockstep.LockHandle;
import io.lockstep.LockTemplate;
import io.lockstep.OnLocked;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;
import org.springframework.core.test.tools.TestCompiler;
import org.springframework.javapoet.ClassName;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application processed ahead of time, as Spring Boot's {@code process-aot} does: its
 * runtime hints cover what Lockstep loads or calls reflectively (every Lua script on the
 * class path, every fallback method, the members key expressions read), and the compiled
 * AOT context starts and locks against a real Redis.
 */
@CompileWithForkedClassLoader
class AheadOfTimeTests {

	private static final ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();

	@Test
	void hintsCoverEveryLuaScriptOnTheClassPath() throws IOException {
		RuntimeHints hints = hints();
		Resource[] scripts = new PathMatchingResourcePatternResolver().getResources("classpath*:io/lockstep/**/*.lua");
		assertThat(scripts).hasSizeGreaterThanOrEqualTo(7);
		for (Resource script : scripts) {
			String url = script.getURL().toString();
			String path = url.substring(url.lastIndexOf("io/lockstep/"));
			assertThat(hints).as(path).matches(RuntimeHintsPredicates.resource().forResource(path));
		}
	}

	@Test
	void hintsCoverEveryFallbackMethod() {
		RuntimeHints hints = hints();
		int fallbacks = 0;
		for (Class<?> type : List.of(Orders.class, Shipping.class)) {
			for (Method method : annotatedMethods(type)) {
				String fallback = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class).fallback();
				if (!fallback.isEmpty()) {
					fallbacks++;
					Method[] candidates = ReflectionUtils.getUniqueDeclaredMethods(type,
							(candidate) -> candidate.getName().equals(fallback));
					assertThat(candidates).as(fallback)
						.anyMatch((candidate) -> reflection.onMethodInvocation(candidate).test(hints));
				}
			}
		}
		assertThat(fallbacks).isEqualTo(2);
		// Spring's hints for a class-based proxy cover its methods; a JDK proxy's do not
		assertThat(hints).matches(reflection.onMethodInvocation(Shipping.class, "busy"));
	}

	@Test
	void hintsCoverTheMembersKeyExpressionsRead() throws NoSuchMethodException {
		assertThat(hints()).matches(reflection.onType(Orders.class))
			.matches(reflection.onMethodInvocation(Order.class, "id"))
			.matches(reflection.onMethodInvocation(Order.class, "customer"))
			.matches(reflection.onMethodInvocation(Customer.class, "getName"))
			.matches(reflection.onMethodInvocation(Order.class, "lines"))
			.matches(reflection.onFieldAccess(Line.class, "sku"))
			.matches(reflection.onMethodInvocation(Customer.class, "getEmail").negate())
			.matches(reflection.onConstructorInvocation(ArrayList.class.getDeclaredConstructor()));
	}

	@Test
	void theCompiledContextLocksAgainstRedis() throws Exception {
		try (RedisFixture redis = new RedisFixture()) {
			RedisNode node = redis.standalone();
			ApplicationContextInitializer<GenericApplicationContext> initializer = compiledInitializer();
			GenericApplicationContext context = new GenericApplicationContext();
			useRedis(context, node);
			initializer.initialize(context);
			context.refresh();
			try (context) {
				checkLocks(context);
			}
		}
	}

	private void checkLocks(GenericApplicationContext context) throws InterruptedException {
		Orders orders = context.getBean(Orders.class);
		Shipper shipping = context.getBean(Shipper.class);
		LockTemplate locks = context.getBean(LockTemplate.class);
		assertThat(AopUtils.isCglibProxy(orders)).isTrue();
		assertThat(AopUtils.isJdkDynamicProxy(shipping)).isTrue();
		Order order = new Order("o-1", new Customer("ann", "ann@example.com"), List.of(new Line("a"), new Line("b")));
		assertThat(orders.place(order)).isEqualTo("o-1 locked: true");
		assertThat(orders.reserve(order)).isEqualTo("a, b locked: true true");
		assertThat(shipping.ship(order, 2)).isEqualTo("shipped");
		assertThat(orders.report()).containsExactly("report");
		assertThat(locks.isLocked("o-1")).isFalse();
		holdingElsewhere(locks, List.of("ann:2", "report"), () -> {
			assertThat(shipping.ship(order, 2)).isEqualTo("busy lockstep:ann:2");
			assertThat(orders.report()).isEmpty();
		});
	}

	/**
	 * Runs the checks while another thread holds the keys (locks are reentrant per call).
	 */
	private static void holdingElsewhere(LockTemplate locks, List<String> keys, Runnable checks)
			throws InterruptedException {
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(1);
		Thread holder = new Thread(() -> {
			try (LockHandle handle = locks.acquireAll(keys)) {
				held.countDown();
				done.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		holder.start();
		try {
			assertThat(held.await(10, TimeUnit.SECONDS)).as("held on the other thread").isTrue();
			checks.run();
		}
		finally {
			done.countDown();
			holder.join(10_000);
		}
	}

	/**
	 * The runtime hints of the application processed ahead of time: processing evaluates
	 * the conditions but connects to nothing.
	 */
	private static RuntimeHints hints() {
		TestGenerationContext generationContext = new TestGenerationContext();
		process(generationContext);
		return generationContext.getRuntimeHints();
	}

	/** The application processed ahead of time and compiled: its context initializer. */
	@SuppressWarnings("unchecked")
	private static ApplicationContextInitializer<GenericApplicationContext> compiledInitializer() {
		TestGenerationContext generationContext = new TestGenerationContext();
		ClassName className = process(generationContext);
		generationContext.writeGeneratedContent();
		AtomicReference<ApplicationContextInitializer<GenericApplicationContext>> initializer = new AtomicReference<>();
		TestCompiler.forSystem()
			.with(generationContext)
			.compile((compiled) -> initializer
				.set(compiled.getInstance(ApplicationContextInitializer.class, className.toString())));
		return initializer.get();
	}

	private static ClassName process(TestGenerationContext generationContext) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("test", Map.of("spring.data.redis.port", 6379)));
		context.register(OrdersApplication.class);
		return new ApplicationContextAotGenerator().processAheadOfTime(context, generationContext);
	}

	private static void useRedis(GenericApplicationContext context, RedisNode node) {
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("redis",
					Map.of("spring.data.redis.host", node.host(), "spring.data.redis.port", node.port())));
	}

	private static List<Method> annotatedMethods(Class<?> type) {
		List<Method> methods = new ArrayList<>();
		ReflectionUtils.doWithMethods(type, methods::add,
				(method) -> AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class));
		return methods;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class })
	@Import({ Orders.class, Shipping.class })
	static class OrdersApplication {

	}

	public static class Orders {

		private final ObjectProvider<LockTemplate> locks;

		public Orders(ObjectProvider<LockTemplate> locks) {
			this.locks = locks;
		}

		@DistributedLock(key = "#order.id")
		public String place(Order order) {
			return order.id() + " locked: " + this.locks.getObject().isLocked(order.id());
		}

		@DistributedLock(key = "#order.lines.![sku]", fallback = "queued")
		public String reserve(Order order) {
			LockTemplate template = this.locks.getObject();
			return "a, b locked: " + template.isLocked("a") + " " + template.isLocked("b");
		}

		@DistributedLock(key = "'report'", onLocked = OnLocked.SKIP)
		public ArrayList<String> report() {
			return new ArrayList<>(List.of("report"));
		}

		String queued(Order order) {
			return "queued";
		}

	}

	public interface Shipper {

		String ship(Order order, int box);

	}

	/** Proxied through its interface (a JDK proxy): no class-based proxy hints. */
	public static class Shipping implements Shipper {

		@Override
		@DistributedLock(key = "#order.customer.name + ':' + #box", waitTime = "200ms", fallback = "busy")
		public String ship(Order order, int box) {
			return "shipped";
		}

		private String busy(Order order, int box, LockAcquisitionException ex) {
			return "busy " + ex.getKey();
		}

	}

	public record Order(String id, Customer customer, List<Line> lines) {
	}

	public static class Customer {

		private final String name;

		private final String email;

		public Customer(String name, String email) {
			this.name = name;
			this.email = email;
		}

		public String getName() {
			return this.name;
		}

		public String getEmail() {
			return this.email;
		}

	}

	public static class Line {

		public final String sku;

		public Line(String sku) {
			this.sku = sku;
		}

	}

}
