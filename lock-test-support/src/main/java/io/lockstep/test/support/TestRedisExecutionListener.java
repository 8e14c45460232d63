package io.lockstep.test.support;

import org.springframework.test.annotation.DirtiesContext.HierarchyMode;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * After a {@link TestRedis} test class: closes its application context (so nothing keeps
 * reconnecting to a server that is gone), then stops the class's {@code redis-server} by
 * its PID. A nested class closes its context but leaves the server to its enclosing
 * class. Registered in {@code META-INF/spring.factories}.
 */
class TestRedisExecutionListener extends AbstractTestExecutionListener {

	@Override
	public void afterTestClass(TestContext testContext) {
		Class<?> testClass = testContext.getTestClass();
		if (!TestContextAnnotationUtils.hasAnnotation(testClass, TestRedis.class)) {
			return;
		}
		try {
			if (testContext.hasApplicationContext()) {
				testContext.markApplicationContextDirty(HierarchyMode.EXHAUSTIVE);
			}
		}
		finally {
			if (LockstepTestContextCustomizerFactory.serverOwner(testClass) == testClass) {
				TestRedisServers.stop(testClass);
			}
		}
	}

}
