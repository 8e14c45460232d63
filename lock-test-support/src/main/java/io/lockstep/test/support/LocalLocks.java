package io.lockstep.test.support;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a Spring test class with JVM-local locks and no Redis: sets
 * {@code lockstep.enabled=false}, so the application's {@code LockTemplate} and
 * {@code @DistributedLock} methods lock within the test's JVM with the same API and
 * semantics (waiting, leases, reentrancy, fencing tokens from a local counter). Nothing
 * connects to Redis for locks. Test classes with the same configuration share one
 * application context; clear its locks between tests with {@link TestLocks#clear()}.
 *
 * <p>
 * The same as {@code @SpringBootTest(properties = "lockstep.enabled=false")}. Cannot be
 * combined with {@link TestRedis}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface LocalLocks {

}
