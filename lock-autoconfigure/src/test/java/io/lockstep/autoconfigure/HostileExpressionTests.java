package io.lockstep.autoconfigure;

import java.lang.invoke.MethodHandles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockstep.DistributedLock;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.description.annotation.AnnotationDescription;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.implementation.FixedValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile key expressions (code execution, reflection, file and process access, bean
 * reflection, assignments, denial of service) fail the start of the application with a
 * message naming the class, the method and the key; none of them ever runs: a canary file
 * that each one tries to create never appears. Argument values that look like expressions
 * are data: they become literal keys.
 */
@RedisTest
class HostileExpressionTests {

	private static final AtomicInteger classes = new AtomicInteger();

	@TempDir
	Path dir;

	private Path canary;

	private RedisNode redis;

	private ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockstepAutoConfiguration.class));

	@BeforeEach
	void useRedis(RedisNode redis) {
		this.redis = redis;
		this.canary = this.dir.resolve("canary");
		this.contextRunner = this.contextRunner.withPropertyValues("spring.data.redis.port=" + redis.port());
		redis.call("FLUSHALL");
	}

	@AfterEach
	void nothingRan() {
		assertThat(this.canary).doesNotExist();
	}

	@Test
	void hostileKeyExpressionsFailTheStartNamingTheMethod() {
		String c = this.canary.toString();
		List<String> payloads = List.of(
				// type references
				"T(java.lang.Runtime).getRuntime().exec('touch " + c + "')",
				"T(java.nio.file.Files).createFile(T(java.nio.file.Path).of('" + c + "'))",
				"T(java.lang.System).exit(1)", "T(org.springframework.util.ReflectionUtils).findMethod(null, 'x')",
				"{1, 2}.![T(java.lang.Runtime).getRuntime().exec('touch " + c + "')]",
				// constructors
				"new java.io.File('" + c + "').createNewFile()", "new java.io.FileOutputStream('" + c + "')",
				"new java.lang.ProcessBuilder({'touch', '" + c + "'}).start()", "new int[100000000]",
				"new java.util.ArrayList(100000000)",
				// reflection through an argument, the root, a literal or a bean
				"#p0.getClass().forName('java.lang.Runtime').getRuntime().exec('touch " + c + "')",
				"#this.getClass().forName('java.lang.Runtime')", "#root.getClass()", "#p0?.getClass()",
				"#p0.class.classLoader.loadClass('java.lang.Runtime')", "#root.targetClass.classLoader",
				"#root.method.invoke(#root.target, #root.args)", "#root.method.declaringClass.getDeclaredMethods()",
				"#root.method.getDeclaringClass().newInstance()",
				"''.getClass().forName('java.lang.Runtime').getMethod('getRuntime').invoke(null)",
				"'x'.class.forName('java.lang.Runtime')", "#p0['class']", "@environment.getClass().getClassLoader()",
				"#root.target.getClass().getDeclaredField('x')",
				"#p0.getClass().getMethod('toString').setAccessible(true)",
				// assignments, functions, variables that are not parameters
				"#p0 = 'x'", "#root.args[0] = 'x'", "#p0++", "#exec('touch " + c + "')",
				"#systemProperties['user.home']",
				// not an expression, and too long
				"#{T(java.lang.Runtime).getRuntime().exec('touch " + c + "')}", "'a' + '" + "b".repeat(10_000) + "'");
		int refused = 0;
		List<String> started = new ArrayList<>();
		for (String payload : payloads) {
			Class<?> bean = annotated(payload);
			Throwable[] failure = new Throwable[1];
			this.contextRunner.withBean(bean).run((context) -> failure[0] = context.getStartupFailure());
			Throwable named = (failure[0] != null) ? lockFailure(failure[0]) : null;
			if (named != null && named.getMessage().contains(bean.getSimpleName() + ".place(String)")
					&& named.getMessage().contains("key '")) {
				refused++;
			}
			else {
				started.add((payload.length() > 80) ? payload.substring(0, 80) + "..." : payload);
			}
		}
		long keys = (Long) this.redis.call("DBSIZE");
		System.out.printf(
				"SpEL: %d hostile key expressions -> %d refused at start-up naming the method, "
						+ "%d started %s; canary file %s; Redis keys %d%n",
				payloads.size(), refused, started.size(), started, Files.exists(this.canary) ? "CREATED" : "absent",
				keys);
		assertThat(started).isEmpty();
		assertThat(keys).isZero();
	}

	@Test
	void argumentValuesThatLookLikeExpressionsAreLiteralKeys() {
		String c = this.canary.toString();
		List<String> values = List.of("#{T(java.lang.Runtime).getRuntime().exec('touch " + c + "')}",
				"T(java.lang.Runtime).getRuntime().exec('touch " + c + "')", "${user.home}",
				"new java.io.File('" + c + "').createNewFile()", "#p0.getClass()");
		this.contextRunner.withBean(Probe.class).run((context) -> {
			Probe probe = context.getBean(Probe.class);
			int literal = 0;
			for (String value : values) {
				if (probe.place(value, this.redis) == 1L) {
					literal++;
				}
			}
			long left = (Long) this.redis.call("DBSIZE") - 1;
			System.out.printf(
					"SpEL: %d argument values shaped like expressions -> %d locked as literal keys, "
							+ "%d keys left after the calls (besides the fencing counter), canary %s%n",
					values.size(), literal, left, Files.exists(this.canary) ? "CREATED" : "absent");
			assertThat(literal).isEqualTo(values.size());
			assertThat(left).isZero();
		});
	}

	/** A class with {@code String place(String sku)} locked by the expression. */
	private static Class<?> annotated(String key) {
		return new ByteBuddy().subclass(Object.class)
			.name(HostileExpressionTests.class.getPackageName() + ".Hostile" + classes.incrementAndGet())
			.defineMethod("place", String.class, Visibility.PUBLIC)
			.withParameter(String.class, "sku")
			.intercept(FixedValue.value("placed"))
			.annotateMethod(AnnotationDescription.Builder.ofType(DistributedLock.class).define("key", key).build())
			.make()
			.load(HostileExpressionTests.class.getClassLoader(),
					ClassLoadingStrategy.UsingLookup.of(MethodHandles.lookup()))
			.getLoaded();
	}

	/** The exception that names the method, as the start-up log shows it. */
	private static Throwable lockFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalStateException && cause.getMessage().startsWith("@DistributedLock on ")) {
				return cause;
			}
		}
		return null;
	}

	static class Probe {

		/**
		 * Whether the literal key {@code lockstep:<sku>} exists in Redis while locked.
		 */
		@DistributedLock(key = "#sku")
		long place(String sku, RedisNode redis) {
			return (Long) redis.call("EXISTS", "lockstep:" + sku);
		}

	}

}
