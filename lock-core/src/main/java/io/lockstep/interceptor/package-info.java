/**
 * The Spring AOP advice behind {@link io.lockstep.DistributedLock}: key expressions,
 * start-up validation, failure policies and the binding of locks to transactions.
 */
package io.lockstep.interceptor;
