package io.lockstep.test.support;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import io.lockstep.LockMonitor;
import io.lockstep.LockTemplate;
import io.lockstep.local.LocalLockTemplate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.util.Assert;

/**
 * The locks of a test's application context: clears them between tests and records the
 * calls of {@code @DistributedLock} methods with the locks they ran under. Every Spring
 * test context has one as a bean while this library is on the test classpath; inject it:
 *
 * <pre class="code">
 * &#64;Autowired
 * TestLocks locks;
 *
 * &#64;AfterEach
 * void clearLocks() {
 *     this.locks.clear();
 * }
 *
 * &#64;Test
 * void placingAnOrderLocksIt() {
 *     this.orders.place("42");
 *     this.locks.assertRanUnderLock("OrderService.place", "orders:42");
 * }
 * </pre>
 *
 * A call is recorded as its method starts, inside its lock, when it comes through the
 * Spring bean (a call from inside the same bean bypasses the proxy: it is neither locked
 * nor recorded). {@code Mono}/{@code Flux} methods, locked on subscription, are not
 * recorded.
 */
public final class TestLocks {

	/** The bean name of the instance the test kit registers. */
	public static final String BEAN_NAME = "lockstepTestLocks";

	private static final int DELETE_BATCH = 500;

	private final ObjectProvider<LockTemplate> locks;

	private final ObjectProvider<RedisConnectionFactory> connectionFactory;

	private final Environment environment;

	private final List<LockedCall> calls = new CopyOnWriteArrayList<>();

	TestLocks(ObjectProvider<LockTemplate> locks, ObjectProvider<RedisConnectionFactory> connectionFactory,
			Environment environment) {
		this.locks = locks;
		this.connectionFactory = connectionFactory;
		this.environment = environment;
	}

	/**
	 * The instance of an application context: the test kit's bean when the context comes
	 * from the Spring TestContext framework, else a new one that clears locks but records
	 * no calls (e.g. for an {@code ApplicationContextRunner}'s context).
	 */
	public static TestLocks of(ApplicationContext context) {
		Assert.notNull(context, "'context' must not be null");
		if (context.containsBean(BEAN_NAME)) {
			return context.getBean(BEAN_NAME, TestLocks.class);
		}
		return new TestLocks(context.getBeanProvider(LockTemplate.class),
				context.getBeanProvider(RedisConnectionFactory.class), context.getEnvironment());
	}

	/**
	 * Forgets every lock and every recorded call, so the next test starts afresh. With
	 * JVM-local locks ({@link LocalLocks}, {@code lockstep.enabled=false}) it empties the
	 * local store; on Redis it deletes every key under the template's key prefix (locks,
	 * wait queues) except the fencing counters, so fencing tokens keep increasing across
	 * tests. Locks held by any process are gone: a holder still running finds its lease
	 * lost at its next renewal or release. Call it between tests, not while a test's work
	 * still runs.
	 * <p>
	 * On Redis it needs the context's {@link RedisConnectionFactory} on a single Redis
	 * (standalone or Sentinel); Redlock ({@code lockstep.redlock.nodes}) and Redis
	 * Cluster are not supported.
	 * @return how many keys were removed (locks and wait queues)
	 * @throws IllegalStateException when the context has no {@link LockTemplate}, or its
	 * Redis cannot be cleared as said above
	 */
	public int clear() {
		this.calls.clear();
		LockTemplate template = this.locks.getIfUnique();
		if (template == null) {
			throw new IllegalStateException(
					"TestLocks.clear(): the application context has no single LockTemplate bean to clear");
		}
		if (template instanceof LocalLockTemplate local) {
			return local.clear();
		}
		if (usesRedlock()) {
			throw new IllegalStateException("TestLocks.clear() clears one Redis, but lockstep.redlock.nodes lists "
					+ "Redlock nodes; use @TestRedis or a single Redis in tests, or clear each node yourself");
		}
		String prefix = (template instanceof LockMonitor monitor) ? monitor.keyPrefix()
				: this.environment.getProperty("lockstep.key-prefix", "lockstep:");
		RedisConnectionFactory factory = this.connectionFactory.getIfUnique();
		if (factory == null) {
			throw new IllegalStateException("TestLocks.clear(): the LockTemplate locks on Redis, but the "
					+ "application context has no single RedisConnectionFactory to delete its '" + prefix
					+ "' keys with");
		}
		return deleteKeys(factory, prefix);
	}

	/**
	 * The calls recorded since the context started or since the last {@link #clear()}.
	 */
	public List<LockedCall> calls() {
		return List.copyOf(this.calls);
	}

	/**
	 * Asserts that a call of {@code method} was recorded and ran under the lock of
	 * {@code key}.
	 * @param method {@code SimpleClassName.method}, e.g. {@code OrderService.place}
	 * @param key the key as the lock names it ({@code <name>:<key>} for
	 * {@code @DistributedLock(name = ...)}, without the key prefix), e.g.
	 * {@code orders:42}
	 * @return the latest call of {@code method} that held the lock
	 * @throws AssertionError when no call of {@code method} was recorded, or none held
	 * the lock; the message lists what was recorded
	 */
	public LockedCall assertRanUnderLock(String method, String key) {
		Assert.hasText(method, "'method' must not be empty");
		Assert.hasText(key, "'key' must not be empty");
		List<LockedCall> recorded = calls();
		List<LockedCall> ofMethod = recorded.stream().filter((call) -> call.method().equals(method)).toList();
		if (ofMethod.isEmpty()) {
			throw new AssertionError("Expected " + method + " to have run under the lock '" + key
					+ "', but no call of it was recorded (recorded: "
					+ (recorded.isEmpty() ? "none" : recorded.toString()) + "). Only @DistributedLock methods "
					+ "called through their Spring bean are recorded: is " + method + " annotated with "
					+ "@DistributedLock? " + LockAssert.BYPASS_HINT);
		}
		for (int i = ofMethod.size() - 1; i >= 0; i--) {
			if (ofMethod.get(i).ranUnderLock(key)) {
				return ofMethod.get(i);
			}
		}
		throw new AssertionError("Expected " + method + " to have run under the lock '" + key + "', but its "
				+ ofMethod.size() + " call(s) ran under: "
				+ ofMethod.stream()
					.map((call) -> LockAssert.describe(call.lockKeys()))
					.collect(Collectors.joining(", ")));
	}

	void record(LockedCall call) {
		this.calls.add(call);
	}

	private boolean usesRedlock() {
		String nodes = this.environment.getProperty("lockstep.redlock.nodes");
		return (nodes != null && !nodes.isBlank()) || this.environment.containsProperty("lockstep.redlock.nodes[0]");
	}

	private static int deleteKeys(RedisConnectionFactory factory, String prefix) {
		ScanOptions options = ScanOptions.scanOptions().match(glob(prefix) + "*").count(1000).build();
		List<byte[]> keys = new ArrayList<>();
		try (RedisConnection connection = factory.getConnection();
				Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
			while (cursor.hasNext()) {
				byte[] key = cursor.next();
				if (!new String(key, StandardCharsets.UTF_8).endsWith("__fence")) {
					keys.add(key);
				}
			}
			long deleted = 0;
			for (int from = 0; from < keys.size(); from += DELETE_BATCH) {
				List<byte[]> batch = keys.subList(from, Math.min(keys.size(), from + DELETE_BATCH));
				Long count = connection.keyCommands().del(batch.toArray(new byte[0][]));
				deleted += (count != null) ? count : 0;
			}
			return (int) deleted;
		}
	}

	/** The prefix as a Redis glob that matches it literally. */
	static String glob(String prefix) {
		StringBuilder glob = new StringBuilder(prefix.length() + 4);
		for (char c : prefix.toCharArray()) {
			if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
				glob.append('\\');
			}
			glob.append(c);
		}
		return glob.toString();
	}

}
