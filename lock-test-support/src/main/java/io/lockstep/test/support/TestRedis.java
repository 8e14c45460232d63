package io.lockstep.test.support;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives a Spring test class its own real {@code redis-server}, with no Docker: started on
 * a free {@code 127.0.0.1} port when the class's application context is created, with
 * {@code spring.data.redis.host}, {@code .port} and {@code .url} pointing at it, and
 * stopped by its PID (after the context is closed) when the class is done.
 *
 * <p>
 * The binary is {@code redis-server} from {@code PATH}, else the Redis 6.2 binary inside
 * the {@code com.github.codemonstur:embedded-redis} jar (Linux and macOS); the system
 * property {@code lockstep.test.redis-server} (or {@code LOCKSTEP_REDIS_SERVER}) names
 * another, a {@code valkey-server} as well ({@code valkey} picks the one on
 * {@code PATH}). Where none can start, the context fails to load and says why: the tests
 * fail, never skip. The server each class ran is logged as it names itself, e.g.
 * {@code valkey-server 8.0.1}.
 *
 * <p>
 * The server is standalone, empty, without password or persistence. The URL
 * {@code redis://127.0.0.1:<port>} takes the place of any URL, credentials and database
 * the application configures; {@code spring.data.redis.sentinel.*} or
 * {@code spring.data.redis.cluster.*} settings would still win over it, so leave them out
 * of the test's configuration. Every test class with this annotation gets its own server
 * and so its own application context (subclasses too; {@code @Nested} classes share their
 * enclosing class's server). Clear locks between the tests of a class with
 * {@link TestLocks#clear()}.
 *
 * @see LocalLocks
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface TestRedis {

	/**
	 * Extra {@code redis-server} options, e.g. {@code {"--maxmemory", "4mb"}}.
	 */
	String[] arguments() default {};

}
