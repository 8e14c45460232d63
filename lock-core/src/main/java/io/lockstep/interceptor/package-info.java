/**
 * The Spring AOP advice behind {@link io.lockstep.DistributedLock}: key expressions,
 * start-up validation, failure policies, the binding of locks to transactions, and the
 * runtime hints of annotated methods for ahead-of-time processing.
 */
@NullMarked
package io.lockstep.interceptor;

import org.jspecify.annotations.NullMarked;
