package io.lockstep.test;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Hands real Redis processes to tests. Resolves two parameter types:
 * <ul>
 * <li>{@link RedisNode}: one standalone node shared by every test of the class, started
 * on first use and killed when the class is done;</li>
 * <li>{@link RedisFixture}: a fixture for the scope it is resolved in (a test method, or
 * the class for {@code @BeforeAll}); every node it started is killed at the end of that
 * scope, also when the test fails.</li>
 * </ul>
 * It also sets Awaitility's defaults for the tests it runs: the first check at once and
 * then every 5 ms (not 100 ms), as the states they wait for are reached within
 * milliseconds and some report how long they took.
 *
 * @see RedisTest
 */
public class RedisExtension implements ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RedisExtension.class);

	static {
		Awaitility.setDefaultPollDelay(Duration.ZERO);
		Awaitility.setDefaultPollInterval(Duration.ofMillis(5));
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == RedisNode.class || type == RedisFixture.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		if (type == RedisFixture.class) {
			return fixture(extensionContext);
		}
		ExtensionContext classContext = classContext(extensionContext);
		return classContext.getStore(NAMESPACE)
			.computeIfAbsent(RedisNode.class, (key) -> fixture(classContext).standalone(), RedisNode.class);
	}

	private static RedisFixture fixture(ExtensionContext context) {
		return context.getStore(NAMESPACE)
			.computeIfAbsent(RedisFixture.class, (key) -> new RedisFixture(), RedisFixture.class);
	}

	private static ExtensionContext classContext(ExtensionContext context) {
		ExtensionContext current = context;
		while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
			current = current.getParent().get();
		}
		return current;
	}

}
