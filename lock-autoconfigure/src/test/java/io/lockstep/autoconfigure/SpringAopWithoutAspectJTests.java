package io.lockstep.autoconfigure;

import io.lockstep.DistributedLock;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code @DistributedLock} advice is a plain Spring AOP advisor: it needs no AspectJ
 * weaver, so the starter does not bring {@code spring-boot-starter-aspectj}. Here AspectJ
 * is hidden from the application and Spring Boot's own AOP auto-configuration runs.
 */
@RedisTest
class SpringAopWithoutAspectJTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
				LockstepAutoConfiguration.class))
		.withClassLoader(new FilteredClassLoader("org.aspectj"))
		.withBean(Job.class);

	@Test
	void annotatedMethodsRunUnderTheirLockWithoutAspectJ(RedisNode redis) {
		this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port()).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(ClassUtils.isPresent("org.aspectj.weaver.Advice", context.getClassLoader())).isFalse();
			Job job = context.getBean(Job.class);
			assertThat(AopUtils.isAopProxy(job)).isTrue();
			assertThat(job.run(redis)).as("the lock key while the method runs").isEqualTo(1L);
			assertThat(redis.call("EXISTS", "lockstep:job:nightly")).isEqualTo(0L);
		});
	}

	public static class Job {

		@DistributedLock(name = "job", key = "'nightly'")
		public Object run(RedisNode redis) {
			return redis.call("EXISTS", "lockstep:job:nightly");
		}

	}

}
