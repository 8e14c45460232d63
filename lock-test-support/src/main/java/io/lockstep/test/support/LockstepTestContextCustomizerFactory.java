package io.lockstep.test.support;

import java.util.List;

import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.TestContextAnnotationUtils.AnnotationDescriptor;
import org.springframework.util.ClassUtils;

/**
 * Gives every Spring test context the {@link TestLocks} bean and its call recorder, plus
 * a real Redis for {@link TestRedis} test classes or JVM-local locks for
 * {@link LocalLocks} ones. Registered in {@code META-INF/spring.factories}.
 */
class LockstepTestContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		AnnotationDescriptor<TestRedis> redis = TestContextAnnotationUtils.findAnnotationDescriptor(testClass,
				TestRedis.class);
		boolean local = TestContextAnnotationUtils.hasAnnotation(testClass, LocalLocks.class);
		if (redis != null && local) {
			throw new IllegalStateException(testClass.getName() + " has both @TestRedis and @LocalLocks: choose "
					+ "one (a real Redis, or JVM-local locks without Redis)");
		}
		if (redis == null) {
			return new LockstepTestContextCustomizer(null, List.of(), local);
		}
		return new LockstepTestContextCustomizer(serverOwner(testClass), List.of(redis.getAnnotation().arguments()),
				false);
	}

	/**
	 * The class whose {@link TestRedis} server a test class uses: itself, or for a
	 * {@code @Nested} (inner) class, its enclosing class's owner.
	 */
	static Class<?> serverOwner(Class<?> testClass) {
		Class<?> owner = testClass;
		while (ClassUtils.isInnerClass(owner)
				&& TestContextAnnotationUtils.hasAnnotation(owner.getEnclosingClass(), TestRedis.class)) {
			owner = owner.getEnclosingClass();
		}
		return owner;
	}

}
