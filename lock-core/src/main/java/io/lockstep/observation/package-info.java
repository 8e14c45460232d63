/**
 * Micrometer observations of locks: {@code lockstep.acquire} and {@code lockstep.held},
 * their documentation and a replaceable convention. Optional: used only when Micrometer
 * is present.
 */
package io.lockstep.observation;
